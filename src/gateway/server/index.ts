export { HttpServerLive } from "./Server.ts"
