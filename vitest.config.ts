import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers and databases; two at a time suit a 2-core machine.
    maxWorkers: 2,
    env: {
      // Parts at https://files.example/... are created without downloading
      // (src/engine/geometry/ModelFetcher.ts); the geometry suites serve real files.
      MODEL_FETCH_PLACEHOLDER_HOSTS: "example",
      // No rate limit unless a suite sets one (RATE_LIMIT's default, 600/60s, would refuse the fuzzer and the load drills).
      RATE_LIMIT: "off"
    }
  }
})
