/**
 * The service layers over storage: what a server, a CLI command or a test
 * composes, given a SqlClient and AppConfig. Downstream is the remote engine
 * when DOWNSTREAM_URL is set, the embedded one otherwise.
 */
import { Layer } from "effect"
import { DownstreamLive } from "./DownstreamHttp.ts"
import { MeterSql } from "./MeterSql.ts"
import { SecretStoreSql } from "./SecretStoreSql.ts"

export const ServicesLive = Layer.mergeAll(SecretStoreSql, MeterSql, DownstreamLive)
