export { AdminAuthLive, AdminBadRequestsLive, AdminHandlers } from "./AdminHandlers.ts"
