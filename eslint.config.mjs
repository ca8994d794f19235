// Lint and format: typescript-eslint's recommended rules, and dprint (through
// @effect/eslint-plugin, as Effect's own repositories do) for the layout.
// `npm run lint` checks; `npm run lint -- --fix` formats.
import * as effectEslint from "@effect/eslint-plugin"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"

// `x as unknown as T` says nothing the compiler can check: src/ uses generics, Schema APIs and type guards instead.
const noDoubleCast = {
  selector: "TSAsExpression > TSAsExpression.expression[typeAnnotation.type='TSUnknownKeyword']",
  message: "No `as unknown as` in src/: type it with generics, a Schema API or a type guard."
}

// src/gateway/request is the path every surface shares: a surface's own path (`/v1/mcp`, `/v1/model-file`) lives in its slice.
const noSurfacePath = {
  selector: "Literal[value=/^\\/(v1|api)\\//], TemplateElement[value.raw=/^\\/(v1|api)\\//]",
  message: "src/gateway/request names no surface path: give the behaviour from the surface's slice (for example a LimitedSurface)."
}

// `(...) => Effect.gen(function*() {...})`, and the same piped
const noPerCallGenerator = [
  "ArrowFunctionExpression > CallExpression.body[callee.object.name='Effect'][callee.property.name='gen']",
  "ArrowFunctionExpression > CallExpression.body > MemberExpression.callee > CallExpression.object[callee.object.name='Effect'][callee.property.name='gen']"
].map((selector) => ({
  selector,
  message:
    "A generator function made per call keeps the request alive until a full collection: define it once with Effect.fnUntraced(function*(...args) {...})."
}))

/** The request path's files, held to the per-call rule too. */
const HOT_REQUEST_FILES = ["src/gateway/request/IncomingSecretGuard.ts", "src/gateway/request/IncomingSecretAuthLive.ts"]

export default defineConfig(
  // test/http/openapi-tools: written against a client the test generates, and type-checked by it.
  { ignores: ["node_modules/**", "data/**", "**/*.d.ts", "test/http/openapi-tools/**"] },
  {
    files: ["**/*.ts", "**/*.mjs"],
    extends: [tseslint.configs.recommended, effectEslint.configs.dprint],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 160,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  },
  {
    files: ["src/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", noDoubleCast] }
  },
  {
    files: ["src/gateway/request/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", noDoubleCast, noSurfacePath] }
  },
  {
    // Every request passes through these: a generator function made per call pins the request's objects in the
    // old generation until the next full collection (bench/README.md, "Why the request path has no per-call generator").
    files: [
      "src/gateway/rest/ForwardHandlers.ts",
      "src/gateway/rest/RecordReadDirect.ts",
      "src/gateway/mcp/McpToolCalls.ts",
      "src/gateway/mcp/McpResources.ts",
      "src/gateway/mcp/McpLegacy.ts",
      "src/gateway/rest/Idempotency.ts",
      "src/engine/Engine.ts",
      "src/engine/crud.ts",
      "src/engine/RecordRepository.ts"
    ],
    // The rule's options replace src/'s: the double cast stays forbidden here too.
    rules: { "no-restricted-syntax": ["error", noDoubleCast, ...noPerCallGenerator] }
  },
  {
    files: HOT_REQUEST_FILES,
    rules: { "no-restricted-syntax": ["error", noDoubleCast, noSurfacePath, ...noPerCallGenerator] }
  },
  {
    // src/ has no `any` escape hatch (docs/architecture.md); tests may hold loose JSON.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
