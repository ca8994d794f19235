/**
 * The service layers over storage: what a server, a CLI command or a test
 * composes, given a SqlClient and AppConfig.
 */
import { Layer } from "effect"
import { DownstreamEmbedded } from "./DownstreamEmbedded.ts"
import { MeterSql } from "./MeterSql.ts"
import { SecretStoreSql } from "./SecretStoreSql.ts"

export const ServicesLive = Layer.mergeAll(SecretStoreSql, MeterSql, DownstreamEmbedded)
