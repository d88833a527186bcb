/**
 * The npm package as a user gets it: `npm pack` of the built repository, installed with
 * `npm install -g` into an empty prefix outside the repository, nothing of the clone on PATH. It must
 * hold only what runs, within the budget docs/releasing.md states; give `kpt-variants` and every
 * function on PATH; lay out and render the example fleet as bin/kpt-variants does; and run each
 * function's examples through `kpt fn render` / `kpt fn eval` with `exec:`. Run on the Node that runs
 * the tests (CI runs it on Node 22 and 24); npm installs the package's dependencies from the registry.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { execa } from 'execa'
import { findCases, gitIdentity, repoRoot, runCase } from './e2e/runner.js'
import { readTreeWithModes } from './support/git-repo.js'
import { functionPrograms } from '../scripts/programs.js'
import { packageVersion } from '../scripts/image-names.js'
import { runCliOk } from './support/cli-run.js'

/** The size budget of the package (docs/releasing.md): packed and unpacked. */
const budget = { packed: 1.5 * 2 ** 20, unpacked: 7 * 2 ** 20 }

const version = packageVersion(repoRoot)
let dir: string
let prefix: string
/** The tests' environment: the installed programs and this Node first on PATH, never the clone's bin/. */
let env: NodeJS.ProcessEnv
let packed: { filename: string; size: number; unpackedSize: number; files: { path: string }[] }

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-package-'))
  prefix = join(dir, 'prefix')
  const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: repoRoot })
  packed = (JSON.parse(String(pack.stdout)) as (typeof packed)[])[0]!
  // An install as a user makes it: in a directory of its own, away from the clone.
  const user = join(dir, 'user')
  await execa('mkdir', ['-p', user])
  await execa(
    'npm',
    ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', join(dir, packed.filename)],
    { cwd: user },
  )
  const path = (process.env['PATH'] ?? '').split(delimiter).filter((p) => p !== join(repoRoot, 'bin'))
  env = {
    ...process.env,
    ...gitIdentity,
    PATH: [join(prefix, 'bin'), dirname(process.execPath), ...path].join(delimiter),
  }
}, 300_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test(`the package holds only what runs, within ${budget.packed / 2 ** 20} MiB packed and ${budget.unpacked / 2 ** 20} MiB unpacked`, () => {
  expect(packed.filename).toBe(`kpt-variants-${version}.tgz`)
  expect(packed.size).toBeLessThan(budget.packed)
  expect(packed.unpackedSize).toBeLessThan(budget.unpacked)
  const files = packed.files.map((f) => f.path)
  const allowed = [
    /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|SECURITY\.md)$/,
    /^bin\/[\w-]+(\.js)?$/,
    /^dist\/bundles\/[\w-]+\.(cjs|js|css)$/,
    /^functions\/[\w-]+\/(README\.md|metadata\.yaml)$/,
    /^examples\/fleet\//,
  ]
  expect(files.filter((file) => !allowed.some((pattern) => pattern.test(file)))).toEqual([])
  for (const { name } of functionPrograms) {
    expect(files).toContain(`bin/${name}`)
    expect(files).toContain(`dist/bundles/${name}.cjs`)
    expect(files).toContain(`functions/${name}/README.md`)
    expect(files).toContain(`functions/${name}/metadata.yaml`)
  }
  expect(files).toEqual(
    expect.arrayContaining(['LICENSE', 'README.md', 'bin/kpt-variants', 'dist/bundles/kpt-variants.cjs']),
  )
})

test('npm install -g puts kpt-variants and every function on PATH, at the package version', async () => {
  expect(readdirSync(join(prefix, 'bin')).sort()).toEqual(
    ['kpt-variants', ...functionPrograms.map((p) => p.name)].sort(),
  )
  const which = await execa('sh', ['-c', 'command -v kpt-variants'], { env })
  expect(String(which.stdout).trim()).toBe(join(prefix, 'bin', 'kpt-variants'))
  expect(String((await execa('kpt-variants', ['--version'], { env })).stdout).trim()).toBe(version)
  for (const { name } of functionPrograms) {
    const help = await execa(name, ['--help'], { env, reject: false })
    expect({ name, exitCode: help.exitCode }).toEqual({ name, exitCode: 0 })
  }
}, 60_000)

test('the installed kpt-variants lays out the example fleet and renders it as bin/kpt-variants does', async () => {
  const work = join(dir, 'user')
  const demo = await execa('kpt-variants', ['demo', 'fleet-demo'], { cwd: work, env })
  expect(demo.stdout).toContain('kpt-variants render fleet-demo/fleet --out fleet-demo/rendered')
  const render = await execa(
    'kpt-variants',
    ['render', 'fleet-demo/fleet', '--out', 'installed', '--cache', 'cache-1'],
    {
      cwd: work,
      env,
    },
  )
  expect(render.stderr).toContain(
    '12 variant(s): 12 created, 0 updated, 0 unchanged, 0 failed; dependencies: 7 installed',
  )
  // The clone's program, on the same fleet: the same packages, byte for byte.
  await runCliOk(work, ['render', 'fleet-demo/fleet', '--out', 'clone', '--cache', 'cache-2'], { baseEnv: env })
  expect(readTreeWithModes(join(work, 'installed'))).toEqual(readTreeWithModes(join(work, 'clone')))
  // And as drafts in git, then the status from the repositories.
  expect(
    (await execa('kpt-variants', ['render', 'fleet-demo/fleet', '--git', '--cache', 'cache-1'], { cwd: work, env }))
      .exitCode,
  ).toBe(0)
  const status = await execa('kpt-variants', ['status', 'fleet-demo/fleet', '--cache', 'cache-1'], { cwd: work, env })
  expect(status.stdout).toContain('drafts/nginx/packagevariant-1')
}, 300_000)

/** Each function's first example that succeeds, a `kpt fn render` one where the function has one. */
const examples = functionPrograms.map(({ name }) => {
  const own = findCases().filter((c) => c.name.startsWith(`${name}/`) && !c.config.skip && !c.config.exitCode)
  return own.find((c) => c.config.testType !== 'eval') ?? own[0]!
})

test.each(examples.map((c) => [c.name, c] as const))(
  'kpt runs the installed function with exec: %s',
  async (_name, testCase) => {
    await runCase(testCase, undefined, join(prefix, 'bin'))
  },
  120_000,
)
