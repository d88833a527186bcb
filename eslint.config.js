// ESLint (flat config): the recommended JavaScript and typescript-eslint rules, the layering of
// functions/ and orchestrator/ (each folder imports only from the folders below it, no import
// cycle), the `yaml` package only inside functions/krm/, and the exceptions the code base follows
// on purpose. Formatting is Prettier's (.prettierrc.json).
import js from '@eslint/js'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'
import importX from 'eslint-plugin-import-x'
import tseslint from 'typescript-eslint'

/**
 * The layers, bottom up: a module may import from its own layer and those before it, never from
 * a later one (orchestrator/README.md draws the map). Within functions/, the SDK and the APIs sit
 * below the functions, and a function imports another only through its index.ts. A layer is a
 * folder, or files named by a pattern: orchestrator/dependencies/ sits at three levels.
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
  // The DependencyPolicy and the cluster's Kubernetes version, which plan/'s version following reads too.
  'orchestrator/dependencies/{policy,platform}.ts',
  'orchestrator/plan',
  // The dependency plan of a repository, from plan/'s variants.
  'orchestrator/dependencies/!(policy|platform|run-phase).ts',
  'orchestrator/rollout',
  'orchestrator/variant',
  'orchestrator/output',
  // The run's dependency phase is a step of run/.
  ['orchestrator/run', 'orchestrator/dependencies/run-phase.{ts,js}'],
  'orchestrator/status',
  'orchestrator/page',
  'orchestrator/controller',
  'orchestrator/commands',
  'orchestrator/cli.{ts,js}',
]

/** A layer's files as globs: a folder's, or those a file pattern names. */
const globs = (layer) => [layer].flat().map((path) => `./${path}${path.includes('.') ? '' : '/**'}`)

/** For each layer, the later layers it must not import from. */
const upwardImports = layers.slice(0, -1).map((layer, i) => ({
  target: globs(layer),
  from: layers.slice(i + 1).flatMap(globs),
  message: `${[layer].flat().join(' and ')} sits below these folders (orchestrator/README.md): move what both need down instead`,
}))

/**
 * The files outside functions/krm/ that may still import the `yaml` package itself; everything else reads and
 * writes YAML through the SDK's engine, functions/krm/yaml/index.ts (functions/krm/README.md, "The YAML layer").
 */
const yamlImporters = [
  // Oracles of the engine: they read what it printed with the library alone, past the engine's own limits (the
  // hostile corpus nests deeper than it parses, and its output echoes that) and without its comment fix-ups (the
  // comments kpt wrote against ours).
  'test/hostile/**',
  'test/differential/**',
  // The baseline these benchmarks measure the SDK against: the library's own parseDocument and toString.
  'bench/functions.bench.ts',
  'bench/package-context.bench.ts',
  'bench/package-variant.bench.ts',
  'bench/sdk.bench.ts',
]

const yamlMessage =
  'YAML goes through functions/krm/yaml/index.ts (parse, print, parseValue, printValue, the document model): see functions/krm/README.md'

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
    // A function reads as named phases (issue 43): past 60 lines, split it. Tests are exempt (a table of cases
    // is one test); so are commander's declaration tables, each marked where it stands.
    files: ['functions/**/*.ts', 'orchestrator/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }] },
  },
  {
    // YAML through the engine, which keeps kpt's bytes and comments, the nesting and alias limits and the fast paths.
    files: ['**/*.ts', '**/*.js'],
    ignores: ['functions/krm/**', ...yamlImporters],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'yaml', message: yamlMessage }],
          patterns: [{ group: ['yaml/*'], message: yamlMessage }],
        },
      ],
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
