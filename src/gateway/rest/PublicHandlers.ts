/**
 * Handlers of the public API: every endpoint of every group forwards to the
 * engine with the one PublicOperationHandler (ForwardHandlers.ts).
 */
import { PublicApi } from "../../contract/PublicApi.ts"
import { handleEveryEndpoint } from "../../platform/http/EveryEndpoint.ts"
import { PublicOperationHandler } from "./ForwardHandlers.ts"

export const PublicHandlers = handleEveryEndpoint(PublicApi, PublicOperationHandler)
