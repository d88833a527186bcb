/** The doc-reference lint: what it reads as a path or a symbol of the repository, and what it reports. */
import { checkMarkdown, repositoryOf } from './check-doc-references.js'

/** A small repository: each file with its text (empty unless a symbol test reads it). */
const sources: Record<string, string> = {
  'README.md': '',
  'docs/architecture.md': '',
  'docs/render.md': '',
  'orchestrator/README.md': '',
  'orchestrator/run/memo.ts': 'export class RenderMemo {\n  save(): void {}\n}\n',
  'orchestrator/run/quiet-run.ts': 'export function quietRunApplies(): boolean {\n  return true\n}\n',
  'orchestrator/run/setup.ts': 'export async function loadAndPlan() {}\n',
  'orchestrator/output/directory/staging-thread.ts': 'export class StagingThread {}\n',
  'orchestrator/output/directory/read-ahead.ts': 'export class ReadAhead {}\n',
  'functions/krm/yaml/nodes.ts': 'export function toNode() {}\nexport function reconcileNode() {}\n',
  'functions/krm/yaml/documents.ts': "import { toNode } from './nodes.js'\nexport function parseYamlDocument() {}\n",
  'functions/krm/kube-object.ts': 'export class KubeObject {\n  plainValue() {}\n}\n',
  'test/render.e2e.test.ts': '',
  'bench/RESULTS.md': '',
  'examples/fleet/repositories.yaml': '',
}
const repo = repositoryOf(Object.keys(sources), (path) => sources[path])

/** The problems of `text` as the doc `doc`, as the lint prints them (without the doc's name). */
const check = (text: string, doc = 'docs/architecture.md') =>
  checkMarkdown(doc, text, repo).map((p) => `${p.line}: \`${p.ref}\` ${p.message}`)

test('a path that moved is reported with its line; where it is now passes', () => {
  const doc = [
    '- a staging thread writes each package (`output/staging-thread.ts`);',
    '- packages are read ahead (`output/read-ahead.ts`);',
    '- a re-render skips unchanged variants (`orchestrator/render-memo.ts`),',
    '  or the whole run (`orchestrator/quiet-run.ts`).',
    '',
    'Now: `output/directory/staging-thread.ts`, `output/directory/read-ahead.ts`,',
    '`orchestrator/run/memo.ts` and `orchestrator/run/quiet-run.ts`.',
  ].join('\n')
  expect(check(doc)).toEqual([
    '1: `output/staging-thread.ts` does not exist',
    '2: `output/read-ahead.ts` does not exist',
    '3: `orchestrator/render-memo.ts` does not exist',
    '4: `orchestrator/quiet-run.ts` does not exist',
  ])
})

test('a path resolves from the root, from the doc, or as the tail of one; ./ and ../ only from the doc', () => {
  expect(check('`orchestrator/run/memo.ts`, `run/memo.ts`, `memo.ts`, `RESULTS.md`, `render.md`')).toEqual([])
  expect(check('`run/setup.ts` and `README.md`', 'orchestrator/README.md')).toEqual([])
  expect(check('`../orchestrator/README.md` and `./render.md`')).toEqual([])
  expect(check('`./memo.ts` and `../run/memo.ts`')).toEqual([
    '1: `./memo.ts` does not exist',
    '1: `../run/memo.ts` does not exist',
  ])
  expect(check('`run/render-memo.ts`, `render-memo.ts`, `plan/`, `orchestrator/cache/`')).toEqual([
    '1: `run/render-memo.ts` does not exist',
    '1: `render-memo.ts` does not exist',
    '1: `orchestrator/cache/` does not exist',
  ])
  // A span ending in `/` names a folder.
  expect(check('`orchestrator/run/memo.ts/` and `orchestrator/run/`')).toEqual([
    '1: `orchestrator/run/memo.ts/` does not exist',
  ])
})

test('spans that are not paths of the repository are left alone', () => {
  const notPaths = [
    'kpt fn render', // a space
    'https://example.com/a.md', // a URL
    'file://repos/edge.git',
    'test/render*.e2e.test.ts', // a glob
    'windows[]',
    '<pkg>/vN', // placeholders
    'sha256:…',
    './staging/src/...',
    'DIR/out.yaml',
    'kpt-variants-X.Y.Z.cdx.json',
    '../repos/edge-NN',
    'key=value', // expressions
    'system:masters',
    '/usr/bin/chromium', // absolute, home, variable
    '~/.kube/config',
    '$XDG_CACHE_HOME/kpt-variants',
    '--out', // a flag
    '@bufbuild/cel', // an npm package
    'dist/bundles/fleet-page.js', // what a build or a run writes
    'demo/fleet/rollout.yaml',
    'bench/out/',
    'ghcr.io/kpt-variants', // domains, API groups, annotations
    'config.porch.kpt.dev/v1alpha1',
    'kpt-variants.dev/package-variant',
    'apps/v1', // versions and tags
    'nginx/v2',
    'nginx/v3@1a2b3c4d5e6f',
    'refs/heads/main', // a git ref
    'upstreams/', // a lone folder name
    'controllers/packagevariants/pkg/', // another project's
    'internal/dependency/manager.go',
    'lib/core',
    'results.yaml', // a data file's name alone
    'rollouts/status', // a name with a slash
    '.css', // an extension
    'highlight.js', // the allowlist
  ]
  expect(check(notPaths.map((span) => `\`${span}\``).join(', '))).toEqual([])
})

test('fenced blocks: a map without a language is checked, examples are not', () => {
  const doc = [
    '```',
    'run/setup.ts          loadAndPlan',
    'run/render-memo.ts    the record (dist/bundles/<name>.cjs)',
    '```',
    '',
    '```shell',
    'node scripts/missing.ts `orchestrator/gone.ts`',
    '```',
    '`orchestrator/gone.ts`',
  ].join('\n')
  expect(check(doc, 'orchestrator/README.md')).toEqual([
    '3: `run/render-memo.ts` does not exist',
    '9: `orchestrator/gone.ts` does not exist',
  ])
})

test('code spans as CommonMark reads them: double backticks, across a line break, not across paragraphs', () => {
  expect(check('``orchestrator/gone.ts`` and `kpt fn\nrender`, then `run/gone.ts`')).toEqual([
    '1: `orchestrator/gone.ts` does not exist',
    '2: `run/gone.ts` does not exist',
  ])
  // A lone backtick pairs with none in the next paragraph.
  expect(check('a ` alone\n\nthen `orchestrator/run/memo.ts`')).toEqual([])
})

test('relative links must lead to a file or folder; anchors and URLs are not checked', () => {
  const doc = [
    'See [render](render.md#the-fleet), [map](../orchestrator/README.md), [the site](https://kpt.dev/x.md),',
    '[top](#top), [old](dependencies.md) and [ref][r].',
    '',
    '[r]: ../bench/GONE.md',
    '[^1]: a footnote, not a link',
  ].join('\n')
  expect(check(doc)).toEqual(['2: `dependencies.md` does not exist', '4: `../bench/GONE.md` does not exist'])
})

test('a symbol named with the file it lives in must appear in that file', () => {
  expect(check('`toNode` in `functions/krm/yaml/nodes.ts`')).toEqual([])
  expect(check('`toNode` and `reconcileNode` in `functions/krm/yaml/documents.ts`')).toEqual([
    '1: `reconcileNode` is not in functions/krm/yaml/documents.ts',
  ])
  expect(check('(`orchestrator/run/setup.ts`: `loadAndPlan`, `planFleet()`)')).toEqual([
    '1: `planFleet()` is not in orchestrator/run/setup.ts',
  ])
  expect(check('`RenderMemo.save()` and `RenderMemo.load` (`run/memo.ts`)')).toEqual([
    '1: `RenderMemo.load` is not in orchestrator/run/memo.ts',
  ])
  // Any of the files named with it will do.
  expect(check('`KubeObject.plainValue()` (`kube-object.ts`, `yaml/documents.ts`)')).toEqual([])
})

test('a table row names the file of the symbols in it', () => {
  const doc = [
    '| file | what |',
    '| --- | --- |',
    '| `yaml/nodes.ts` | new nodes (`toNode`), updated ones (`reconcileNode`) |',
    '| `yaml/documents.ts` | parsing, `toNode`, `reconcileNode` |',
  ].join('\n')
  expect(check(doc, 'functions/krm/README.md')).toEqual([
    '4: `reconcileNode` is not in functions/krm/yaml/documents.ts',
  ])
})

test('prose that only shares a line with a file, a field path and the globals are not symbols of that file', () => {
  const doc = [
    'Read by `loadAndPlan`; see `functions/krm/yaml/nodes.ts`.',
    '`spec.pipeline` and `Symbol.for()` in `functions/krm/yaml/nodes.ts`, and `README.md` in `docs/render.md`.',
    '`planFleet()` at the end of a sentence. `functions/krm/yaml/nodes.ts`',
  ].join('\n')
  expect(check(doc)).toEqual([])
})
