// Lint and format: typescript-eslint's recommended rules, and dprint (through
// @effect/eslint-plugin, as Effect's own repositories do) for the layout.
// `npm run lint` checks; `npm run lint -- --fix` formats.
import * as effectEslint from "@effect/eslint-plugin"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"

export default defineConfig(
  { ignores: ["node_modules/**", "data/**", "**/*.d.ts"] },
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
    // src/ has no `any` escape hatch (docs/architecture.md); tests may hold loose JSON.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
