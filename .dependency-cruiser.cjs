// The direction of dependencies (docs/architecture.md): domain ← api ← services ← layers,
// and the engine beside them, built on domain and api only. `npm run lint` checks it.
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
      name: "api-on-domain-only",
      comment: "src/api defines the HTTP and MCP contract over src/domain; no service or implementation",
      severity: "error",
      from: { path: "^src/api/" },
      to: { path: "^src/", pathNot: "^src/(domain|api)/" }
    },
    {
      name: "services-on-api-and-domain",
      comment: "src/services are service definitions: they name what the layers implement",
      severity: "error",
      from: { path: "^src/services/" },
      to: { path: "^src/", pathNot: "^src/(domain|api|services)/" }
    },
    {
      name: "engine-never-imports-the-gateway",
      comment: "src/engine runs behind the contract: src/domain, src/api definitions and its own files",
      severity: "error",
      from: { path: "^src/engine/" },
      to: { path: "^src/", pathNot: "^src/(domain|api|engine)/" }
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
