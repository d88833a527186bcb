import { setFastPathsOff } from '../../functions/krm/fast-paths.js'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jest } from '@jest/globals'
import { fleetDigest } from '../fleet/load.js'
import { statPackageDirectory } from '../package/directory.js'
import { quietInputs, quietRunApplies, replayQuietRun } from './quiet-run.js'
import type { RenderSettings } from './settings.js'
import { upstreamIndexDigest } from '../upstream/upstreams.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

let dir: string
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'quiet-run-'))))
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const settings = (more: Partial<RenderSettings> = {}): RenderSettings => ({
  fleetDir: 'fleet',
  outDir: 'out',
  dryRun: false,
  diff: false,
  onConflict: 'upstream',
  allowExec: false,
  memo: join(dir, 'cache', 'renders', 'abc.json'),
  cwd: dir,
  env: {},
  ...more,
})

test('only a directory render with a record of earlier renders, not a dry run, nor one writing status, is answered from a quiet record', () => {
  expect(quietRunApplies(settings(), false)).toBe(true)
  const { memo: _none, ...forced } = settings()
  expect(quietRunApplies(forced, false)).toBe(false)
  expect(quietRunApplies(settings({ dryRun: true }), false)).toBe(false)
  expect(quietRunApplies(settings(), true)).toBe(false)
  expect(quietRunApplies(settings({ git: { cacheDir: dir } as RenderSettings['git'] }), false)).toBe(false)
})

test('the inputs change with every setting that can change a render, and with the fleet', () => {
  const base = quietInputs(settings(), 'fleet-digest')
  expect(quietInputs(settings(), 'fleet-digest')).toBe(base)
  for (const more of [
    { fleetDir: 'other' },
    { outDir: 'other' },
    { onConflict: 'downstream' },
    { allowExec: true },
    { namespace: 'team' },
    { shard: { index: 0, count: 2 } },
    { imageFunctions: 'skip' },
    { repositoryBase: '/elsewhere' },
    { clusterScoped: ['example.com/Thing'] },
  ] as Partial<RenderSettings>[])
    expect(quietInputs(settings(more), 'fleet-digest')).not.toBe(base)
  expect(quietInputs(settings(), 'another-fleet')).not.toBe(base)
  // What only shapes the output of the command, not the render, does not count.
  expect(quietInputs(settings({ diff: true, threads: 4 }), 'fleet-digest')).toBe(base)
})

test('no record, a damaged one, or one of other inputs: a full run', async () => {
  const file = join(dir, 'quiet.json')
  mkdirSync(join(dir, 'fleet'))
  expect((await replayQuietRun(settings(), file)).report).toBeUndefined()
  for (const text of ['{', 'null', '{"version":1}', JSON.stringify({ version: 2 })]) {
    writeFileSync(file, text)
    expect((await replayQuietRun(settings(), file)).report).toBeUndefined()
  }
  const record = {
    version: 1,
    inputs: 'not these',
    base: dir,
    upstreams: [],
    upstreamDigest: '',
    packages: {},
    report: { dryRun: false, variants: [], problems: [] },
  }
  writeFileSync(file, JSON.stringify(record))
  expect((await replayQuietRun(settings(), file)).report).toBeUndefined()
})

test('the same inputs, upstream listing and packages: the recorded report; a package more or a changed file: a full run', async () => {
  const file = join(dir, 'quiet.json')
  mkdirSync(join(dir, 'fleet'))
  writeFileSync(join(dir, 'fleet', 'clusters.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n')
  const pkg = join(dir, 'out', 'repo', 'app')
  mkdirSync(pkg, { recursive: true })
  writeFileSync(join(pkg, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app}\n')
  // Metadata is trusted two seconds after the last write: the clock is moved on rather than waited for.
  const digest = statPackageDirectory(pkg, Date.now() + 10_000)!
  const report = {
    dryRun: false,
    variants: [
      {
        subject: 'PackageVariant default/app',
        path: 'repo/app',
        status: 'unchanged',
        reasons: [],
        warnings: [],
        conflicts: [],
      },
    ],
    problems: [],
  }
  const record = {
    version: 1,
    inputs: quietInputs(settings(), fleetDigest(join(dir, 'fleet'))),
    base: dir,
    upstreams: [],
    upstreamDigest: upstreamIndexDigest({ revisions: new Map(), objects: [], problems: new Map() }),
    packages: { 'repo/app': digest },
    report,
  }
  writeFileSync(file, JSON.stringify(record))
  const later = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + 10_000)
  try {
    expect((await replayQuietRun(settings(), file)).report).toEqual(report)
    mkdirSync(join(dir, 'out', 'repo', 'other'))
    writeFileSync(
      join(dir, 'out', 'repo', 'other', 'Kptfile'),
      'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: other}\n',
    )
    expect((await replayQuietRun(settings(), file)).report).toBeUndefined()
    rmSync(join(dir, 'out', 'repo', 'other'), { recursive: true })
    expect((await replayQuietRun(settings(), file)).report).toEqual(report)
    writeFileSync(join(pkg, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: app2}\n')
    const missed = await replayQuietRun(settings(), file)
    expect(missed.report).toBeUndefined()
    // What the replay took goes to the full run, which need not take it again.
    expect(missed).toEqual({ digests: new Map([[pkg, statPackageDirectory(pkg)]]) })
    expect(statPackageDirectory(pkg)).not.toBe(digest)
  } finally {
    later.mockRestore()
  }
})
