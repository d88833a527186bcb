// ESLint (flat config): the recommended JavaScript and typescript-eslint rules, the layering of
// functions/ and orchestrator/ (each folder imports only from the folders below it, no import
// cycle), and the exceptions the code base follows on purpose. Formatting is Prettier's (.prettierrc.json).
import js from '@eslint/js'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'
import importX from 'eslint-plugin-import-x'
import tseslint from 'typescript-eslint'

/**
 * The layers, bottom up: a module may import from its own layer and those before it, never from
 * a later one (orchestrator/README.md draws the map). Within functions/, the SDK and the APIs sit
 * below the functions, and a function imports another only through its index.ts.
 */
const layers = [
  'functions/krm',
  'functions/api',
  'functions/!(krm|api)',
  'orchestrator/util',
  'orchestrator/cache',
  'orchestrator/git',
  'orchestrator/package',
  'orchestrator/clone',
  'orchestrator/merge',
  'orchestrator/pipeline',
  'orchestrator/fleet',
  'orchestrator/upstream',
  'orchestrator/report',
  'orchestrator/plan',
  'orchestrator/rollout',
  'orchestrator/variant',
  'orchestrator/output',
  'orchestrator/run',
  'orchestrator/status',
  'orchestrator/page',
  'orchestrator/controller',
  'orchestrator/commands',
  'orchestrator/cli.{ts,js}',
]

/** For each layer, the later layers it must not import from. */
const upwardImports = layers.slice(0, -1).map((layer, i) => ({
  target: `./${layer}${layer.includes('.') ? '' : '/**'}`,
  from: layers.slice(i + 1).map((later) => `./${later}${later.includes('.') ? '' : '/**'}`),
  message: `${layer} sits below these folders (orchestrator/README.md): move what both need down instead`,
}))

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'demo/', 'bench/out/', '**/examples/**', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // The type-checked rules (unsafe any, floating promises, needless assertions...) on the TypeScript sources.
  ...tseslint.configs.recommendedTypeCheckedOnly.map((config) => ({ ...config, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      // YAML scalars' and API objects' values are `unknown` in the libraries' types: String() of one is how they print.
      '@typescript-eslint/no-base-to-string': 'off',
      // An async method that implements a Promise-returning interface (Output, a test double) needs no await.
      '@typescript-eslint/require-await': 'off',
      // `_`-prefixed names are deliberately unused (destructuring a field away, an unused parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['functions/**/*.ts', 'orchestrator/**/*.ts'],
    ignores: ['**/*.test.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: upwardImports }],
    },
  },
  {
    // Tests read parsed YAML and API objects of any shape (`Json`): reading into them is what they do.
    files: ['**/*.test.ts', '**/*.fixtures.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // expect(object.method) and methods of dynamically imported modules.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
)
