/**
 * ReadinessChecks without storage: `/ready` checks only what the
 * composition's layers add (none, in memory), and answers ready.
 */
import { Layer } from "effect"
import { readinessChecksAfter } from "../../platform/Readiness.ts"
import { ReadinessChecks } from "../../services/Readiness.ts"

export const ReadinessChecksMemory = Layer.sync(ReadinessChecks, () => readinessChecksAfter([]))
