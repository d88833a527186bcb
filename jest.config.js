import { existsSync, readFileSync } from 'node:fs'

/** Jest runs the TypeScript sources as native ES modules, transpiled by ts-jest. */
export default {
  testEnvironment: 'node',
  roots: ['functions', 'orchestrator', 'scripts', 'test']
    .filter((dir) => existsSync(dir))
    .map((dir) => `<rootDir>/${dir}`),
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: [
    '/node_modules/',
    '/dist/',
    '/examples/',
    // `npm run test:unit` skips the tests that drive the real kpt binary.
    ...(process.env.UNIT_ONLY ? ['\\.e2e\\.test\\.ts$'] : []),
  ],
  // What scripts/bundle.ts puts into the programs (orchestrator/util/version.ts), for tests that run the sources.
  globals: {
    KPT_VARIANTS_VERSION: JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version,
  },
  // Property tests run on one seed unless PROPERTY_SEED says otherwise (test/support/property-seed.ts).
  setupFiles: ['<rootDir>/test/support/property-seed.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    // Transpile only, as tsconfig.json's isolatedModules tells ts-jest (no type check here: `npm run typecheck`
    // checks everything, tests included, and CI runs it).
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
}
