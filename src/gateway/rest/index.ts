export { entityTag, makePreconditions, recordTag, writtenId } from "./Conditional.ts"
export {
  type AnswerKeeping,
  CurrentIdempotentCall,
  fingerprint,
  IdempotentOnce,
  INVALID_KEY,
  isValidKey,
  type KeyRefusal,
  type RunOnce
} from "./Idempotency.ts"
export { unstorableInput } from "./InputChecks.ts"
export { ModelUploadLimits } from "./ModelUploadLimits.ts"
export { PublicHandlers, PublicHandlerServices } from "./PublicHandlers.ts"
export { QuotePdfs } from "./QuotePdfHandler.ts"
export { RecordReadDirect } from "./RecordReadDirect.ts"
export { requestLogPage } from "./RequestLogHandler.ts"
