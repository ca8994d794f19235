// The direction of dependencies (docs/architecture.md): domain ← contract ← services ←
// adapters, platform, gateway ← app; the engine beside them, on domain and contract only.
// `npm run lint` checks it.
/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "domain-is-the-root",
      comment: "src/domain holds schemas and pure rules: it imports nothing of ours outside src/domain",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/domain/" }
    },
    {
      name: "contract-on-domain-only",
      comment: "src/contract defines the public, engine, admin and MCP contracts over src/domain: no service, adapter or handler",
      severity: "error",
      from: { path: "^src/contract/" },
      to: { path: "^src/", pathNot: "^src/(domain|contract)/" }
    },
    {
      name: "services-on-contract-and-domain",
      comment: "src/services are service definitions: they name what the adapters implement",
      severity: "error",
      from: { path: "^src/services/" },
      to: { path: "^src/", pathNot: "^src/(domain|contract|services)/" }
    },
    {
      name: "engine-never-imports-the-gateway",
      comment: "src/engine runs behind the contract: src/domain, src/contract and its own files",
      severity: "error",
      from: { path: "^src/engine/" },
      to: { path: "^src/", pathNot: "^src/(domain|contract|engine)/" }
    },
    {
      name: "platform-serves-everyone",
      comment: "src/platform (service main, start failures, log, telemetry, the HTTP pieces every server shares) knows no surface, adapter or engine",
      severity: "error",
      from: { path: "^src/platform/" },
      to: { path: "^src/", pathNot: "^src/(domain|contract|services|platform)/" }
    },
    {
      name: "adapters-know-no-surface",
      comment: "src/adapters implement services; the gateway's surfaces and the compositions use them, never the other way",
      severity: "error",
      from: { path: "^src/adapters/" },
      to: { path: "^src/(gateway|app)/" }
    },
    {
      name: "gateway-reaches-the-engine-through-downstream",
      comment: "the gateway calls the engine through the Downstream service, so it can be embedded or remote",
      severity: "error",
      from: { path: "^src/gateway/" },
      to: { path: "^src/(engine|app)/" }
    },
    {
      name: "engine-server-without-the-gateway",
      comment: "the engine service serves EngineApi on its own: nothing of the gateway",
      severity: "error",
      from: { path: "^src/(app/EngineServer|engineMain)\\.ts$" },
      to: { path: "^src/gateway/" }
    },
    {
      name: "request-names-no-surface",
      comment: "src/gateway/request is the request path every surface shares: it imports no surface (MCP's shapes live in src/gateway/mcp)",
      severity: "error",
      from: { path: "^src/gateway/request/" },
      to: { path: "^src/(gateway/(rest|mcp|admin|server)|contract/mcp)/" }
    },
    {
      name: "slice-through-its-index",
      comment: "a gateway slice is imported from another slice only through its index.ts",
      severity: "error",
      from: { path: "^src/gateway/([^/]+)/" },
      to: { path: "^src/gateway/[^/]+/", pathNot: ["^src/gateway/$1/", "^src/gateway/[^/]+/index\\.ts$"] }
    },
    {
      name: "gateway-through-its-indexes",
      comment: "outside src/gateway, a slice is imported only through its index.ts",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/gateway/" },
      to: { path: "^src/gateway/[^/]+/", pathNot: "^src/gateway/[^/]+/index\\.ts$" }
    },
    {
      name: "engine-sql-only-in-repositories",
      comment:
        "src/engine writes SQL only in its repositories (*Repository.ts); besides them the transaction helpers (transaction.ts, " +
        "writeTransaction.ts) and Engine.ts, which hands operations their client, may use effect/sql; anything may name its types",
      severity: "error",
      from: { path: "^src/engine/", pathNot: "^src/engine/(.+Repository|transaction|writeTransaction|Engine)\\.ts$" },
      to: { path: "node_modules/(effect/dist/sql/|@effect/sql)", dependencyTypesNot: ["type-only"] }
    },
    {
      name: "no-circular",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // Packages resolved through their `exports`, so that a rule can tell a type-only import of one from a value import.
    enhancedResolveOptions: { extensions: [".ts", ".js"], exportsFields: ["exports"], conditionNames: ["import", "types", "default"] }
  }
}
