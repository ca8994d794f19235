/** The production records as the production engine names them. */
import type { Pps, ServiceJob } from "../../domain/resources/production.ts"
import type { RecordOf } from "../typedRecords.ts"

export type Job = RecordOf<typeof ServiceJob>
export type JobState = Job["state"]
export type PpsRecord = RecordOf<typeof Pps>
