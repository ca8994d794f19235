export { ADMIN_PREFIX, AdminAuthLive, AdminBadRequestsLive, AdminHandlers } from "./AdminHandlers.ts"
export { testDataEmptying } from "./TestDataEmptying.ts"
