/**
 * `kpt-variants render` writes only files that parse: a document that would
 * not parse printed with its comments is written without them, with a warning
 * on its variant naming the file and the object, as the SDK's
 * ResourceList.toString() does for functions under kpt
 * (functions/krm/readable.ts). The trigger: a comment after a key whose value
 * becomes an empty list, which the yaml library prints as `replicas: # ...`
 * with `[]` on the next line at the key's indentation. Before, render wrote
 * that text: a package the real kpt refused (`MalformedYAMLError`), in the
 * output directory or in a git draft.
 *
 * Two real paths to it: config injection replacing a commented list with the
 * cluster's empty one, and a 3-way merge taking upstream's empty list under a
 * comment the downstream wrote.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseValue } from '../functions/krm/yaml/index.js'
import { repository } from './support/fleet.js'
import { createRepo, git } from './support/git-repo.js'
import type { JsonReport } from './support/render-workspace.js'
import { source } from './support/source.js'
import { runCliOk } from './support/cli-run.js'

const timeout = 60_000

const kptfile = source`
  apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: shop
    annotations:
      config.kubernetes.io/local-config: "true"
`

/** The database binding of the shop blueprint; `replicas` as given, with an unrelated comment on `port`. */
const database = (replicas: string) => source`
  apiVersion: db.example.com/v1
  kind: DatabaseBinding
  metadata:
    name: orders
    annotations:
      kpt.dev/config-injection: optional
  spec:
    ${replicas}
    port: 5432 # the default
`

/** shop/v1 lists a replica under a comment; shop/v2 has none. (The template is dedented by 2 after `replicas` goes in.) */
const v1 = { 'shop/Kptfile': kptfile, 'shop/database.yaml': database('replicas: # the primary first\n    - localhost') }
const v2 = { 'shop/Kptfile': kptfile, 'shop/database.yaml': database('replicas: []') }

const warning =
  'comments dropped from database.yaml (DatabaseBinding/orders): printed with them, the output would not parse as YAML'

/** A fleet rendering shop into edge-01, at `revision`, with the cluster's empty DatabaseBinding injected or not. */
function fleet(revision: number, inject: boolean): string {
  return [
    repository('blueprints', false),
    repository('edge-01', true),
    source`
      apiVersion: db.example.com/v1
      kind: DatabaseBinding
      metadata:
        name: us-east1-orders-db
        namespace: default
      spec:
        replicas: []
        port: 5432
    `,
    source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata:
        name: shop-edge-01
        namespace: default
      spec:
        upstream:
          repo: blueprints
          package: shop
          revision: ${revision}
        downstream:
          repo: edge-01
          package: shop
    ` + (inject ? '  injectors:\n  - kind: DatabaseBinding\n    name: us-east1-orders-db\n' : ''),
  ].join('---\n')
}

let dir: string
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'render-comments-dropped-'))
  await createRepo(join(dir, 'repos', 'blueprints'), [
    ['shop/v1', v1],
    ['shop/v2', v2],
  ])
  mkdirSync(join(dir, 'fleet'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function writeFleet(revision: number, inject: boolean): void {
  writeFileSync(join(dir, 'fleet', 'fleet.yaml'), fleet(revision, inject))
}

/** `kpt-variants render fleet ARGS --json`, which must exit 0: the report and the summary on stderr. */
async function render(...args: string[]): Promise<{ report: JsonReport; stderr: string }> {
  const run = await runCliOk(dir, ['render', 'fleet', ...args, '--json'], {
    env: { XDG_CACHE_HOME: join(dir, 'cache') },
  })
  return { report: JSON.parse(run.stdout) as JsonReport, stderr: run.stderr }
}

/**
 * The package at `pkg` parses, with the yaml library (parseValue with `stream` is its parser, and throws on an error)
 * and with the real kpt; its database binding as read.
 */
async function expectParses(pkg: string): Promise<Record<string, any>> {
  const docs = parseValue(readFileSync(join(pkg, 'database.yaml'), 'utf8'), { source: 'database.yaml', stream: true })
  const tree = await execa('kpt', ['pkg', 'tree', pkg], { reject: false, stdin: 'ignore' })
  expect({ exitCode: tree.exitCode, stderr: tree.stderr }).toEqual({ exitCode: 0, stderr: '' })
  expect(tree.stdout).toContain('[database.yaml]  DatabaseBinding orders')
  return docs[0] as Record<string, any>
}

describe('kpt-variants render: a document that would not parse with its comments', () => {
  test(
    '--out, config injection empties a commented list: written without its comments, and warned of',
    async () => {
      writeFleet(1, true)
      const { report, stderr } = await render('--out', 'out')
      const binding = await expectParses(join(dir, 'out', 'edge-01', 'shop'))
      expect(binding['spec']).toEqual({ replicas: [], port: 5432 })
      expect(report.variants.map((v) => [v.path, v.status, v.warnings])).toEqual([
        ['edge-01/shop', 'created', [warning]],
      ])
      expect(stderr).toContain(`Warnings:\n  edge-01/shop: ${warning}\n`)
      const text = readFileSync(join(dir, 'out', 'edge-01', 'shop', 'database.yaml'), 'utf8')
      expect(text).not.toContain('# the primary first')
      // kpt's identity comment stays: the next update matches the resource by it.
      expect(text).toContain('metadata: # kpt-merge: /orders\n')
    },
    timeout,
  )

  test(
    '--out, a 3-way merge takes upstream empty list under a downstream comment: written without it, and warned of',
    async () => {
      writeFleet(1, false)
      expect((await render('--out', 'out')).report.variants.map((v) => v.warnings)).toEqual([[]])
      const file = join(dir, 'out', 'edge-01', 'shop', 'database.yaml')
      const cloned = readFileSync(file, 'utf8')
      expect(cloned).toContain('  replicas: # the primary first\n  - localhost\n')
      // The downstream's own comment on the list; upstream then empties it.
      writeFileSync(file, cloned.replace('# the primary first', '# ours: the primary in us-east1'))
      writeFleet(2, false)
      const { report, stderr } = await render('--out', 'out')
      const binding = await expectParses(join(dir, 'out', 'edge-01', 'shop'))
      expect(binding['spec']).toEqual({ replicas: [], port: 5432 })
      expect(report.variants.map((v) => [v.path, v.status, v.warnings])).toEqual([
        ['edge-01/shop', 'updated', [warning]],
      ])
      expect(stderr).toContain(`edge-01/shop: ${warning}`)
      expect(readFileSync(file, 'utf8')).toContain('metadata: # kpt-merge: /orders\n')
    },
    timeout,
  )

  test(
    '--git: the draft parses, and its commit message carries the warning',
    async () => {
      const remote = join(dir, 'repos', 'edge-01')
      await execa('git', ['init', '-q', '--bare', '-b', 'main', remote])
      writeFleet(1, true)
      const { report } = await render('--git')
      const branch = 'drafts/shop/packagevariant-1'
      const checkout = join(dir, 'checkout')
      mkdirSync(checkout)
      const archive = await execa('git', ['-C', remote, 'archive', '--format=tar', branch, 'shop'], {
        encoding: 'buffer',
      })
      await execa('tar', ['-x', '-C', checkout], { input: archive.stdout })
      const binding = await expectParses(join(checkout, 'shop'))
      expect(binding['spec']).toEqual({ replicas: [], port: 5432 })
      expect(report.variants.map((v) => [v.path, v.status, v.warnings])).toEqual([
        ['edge-01/shop', 'created', [warning]],
      ])
      expect(await git(remote, 'log', '-1', '--format=%B', branch)).toContain(`Warning: ${warning}\n`)
    },
    timeout,
  )
})
