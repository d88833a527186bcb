/**
 * A function whose output would not parse with an item's comments drops them
 * and warns, through the real kpt (functions/krm/yaml/read-back.ts): here
 * config-injection sets a commented list to the cluster's empty one, which the
 * yaml library prints as `replicas: # ...` with `[]` on the next line. Before,
 * kpt refused the output (`MalformedYAMLError`) and changed nothing.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseValue } from '../functions/krm/yaml/index.js'
import { source } from './support/source.js'
import { repoRoot } from './e2e/runner.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'comments-dropped-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

test('kpt fn eval --exec bin/config-injection: the package is written, and kpt shows the warning', async () => {
  const pkg = join(dir, 'pkg')
  mkdirSync(pkg)
  writeFileSync(
    join(pkg, 'Kptfile'),
    source`
      apiVersion: kpt.dev/v1
      kind: Kptfile
      metadata:
        name: checkout
        annotations:
          config.kubernetes.io/local-config: "true"
    `,
  )
  writeFileSync(
    join(pkg, 'database.yaml'),
    source`
      apiVersion: db.example.com/v1
      kind: DatabaseBinding
      metadata:
        name: orders
        annotations:
          kpt.dev/config-injection: optional
      spec:
        replicas: # the primary first
        - localhost
        port: 5432
    `,
  )
  writeFileSync(
    join(dir, 'cluster.yaml'),
    source`
      apiVersion: db.example.com/v1
      kind: DatabaseBinding
      metadata:
        name: us-east1-orders-db
        namespace: shop
      spec:
        replicas: []
        port: 5432
    `,
  )
  writeFileSync(
    join(dir, 'pv.yaml'),
    source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata:
        name: checkout-us-east1
        namespace: shop
      spec:
        injectors:
        - kind: DatabaseBinding
          name: us-east1-orders-db
    `,
  )
  const results = join(dir, 'results')
  const run = await execa(
    'kpt',
    [
      'fn',
      'eval',
      pkg,
      '--exec',
      join(repoRoot, 'bin', 'config-injection'),
      '--fn-config',
      join(dir, 'pv.yaml'),
      '--results-dir',
      results,
    ],
    { env: { KPT_VARIANTS_SOURCES: join(dir, 'cluster.yaml') }, reject: false, stdin: 'ignore' },
  )
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toMatchObject({ exitCode: 0 })
  // (kpt then copies the input's comments back by position, which may put this one elsewhere in the file.)
  expect(parseValue(readFileSync(join(pkg, 'database.yaml'), 'utf8'))).toMatchObject({
    spec: { replicas: [], port: 5432 },
  })
  expect(run.stderr).toContain(
    '[warning] db.example.com/v1/DatabaseBinding/orders: comments dropped from database.yaml (DatabaseBinding/orders)',
  )
  const list = parseValue(readFileSync(join(results, 'results.yaml'), 'utf8')) as {
    items: { results: { severity: string; message: string; file?: { path: string } }[] }[]
  }
  expect(list.items[0]!.results).toContainEqual({
    message:
      'comments dropped from database.yaml (DatabaseBinding/orders): printed with them, the output would not parse as YAML',
    severity: 'warning',
    resourceRef: { apiVersion: 'db.example.com/v1', kind: 'DatabaseBinding', name: 'orders' },
    file: { path: 'database.yaml' },
  })
})
