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
    enhancedResolveOptions: { extensions: [".ts", ".js"] }
  }
}
