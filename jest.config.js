/** Jest runs the TypeScript sources as native ES modules, transpiled by SWC. */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/functions', '<rootDir>/orchestrator', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: [
    '/node_modules/',
    '/dist/',
    '/examples/',
    // `npm run test:unit` skips the tests that drive the real kpt binary.
    ...(process.env.UNIT_ONLY ? ['\\.e2e\\.test\\.ts$'] : []),
  ],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } },
    ],
  },
}
