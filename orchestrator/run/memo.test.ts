import { setFastPathsOff } from '../../functions/krm/fast-paths.js'
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { buildFleet } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import { statPackageDirectory } from '../package/directory.js'
import type { StoredPackage } from '../output/output.js'
import { textFile } from '../package/files.js'
import { planFleet } from '../plan/plan.js'
import type { PlannedVariant } from '../plan/plan.js'
import { RenderMemo } from './memo.js'
import type { MemoSettings } from './memo.js'
import { packageRevisionObject } from '../upstream/revisions.js'
import { nginxRevision, repositories } from '../../test/support/unit-fleet.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

const repos = repositories('edge-01')
const variant = source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata: {name: nginx-edge-01, namespace: default}
  spec:
    upstream: {repo: blueprints, package: nginx, revision: 1}
    downstream: {repo: edge-01, package: nginx}
    injectors: [{name: us-east1-endpoints}]
`
const endpoints = (api: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: us-east1-endpoints, namespace: default}\ndata: {API: ${api}}\n`
const unrelated = (value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\ndata: {x: ${value}}\n`

/** The fleet and its one planned variant, with the given injectable objects and upstream commit. */
function planned(options: { api?: string; other?: string; commit?: string } = {}): {
  fleet: Fleet
  variant: PlannedVariant
} {
  const files = [repos, variant, endpoints(options.api ?? 'https://a'), unrelated(options.other ?? 'one')]
  const objects = files.flatMap((text, i) => parseObjects(text, `f${i}.yaml`))
  const fleet = buildFleet({ root: '/fleet', objects, problems: [], digest: files.join('\0') })
  const rev = nginxRevision(1, options.commit ?? 'c1')
  const plan = planFleet(fleet, {
    revisions: new Map([['default|blueprints|nginx', [rev]]]),
    objects: [packageRevisionObject(rev)],
    problems: new Map(),
  })
  expect(plan.failures).toEqual([])
  return { fleet, variant: plan.variants[0]! }
}

const settings: MemoSettings = { allowExec: false, onConflict: 'upstream', namespace: 'default', imageFunctions: 'run' }
const rendered: StoredPackage = {
  published: new Map([
    ['Kptfile', textFile('kind: Kptfile\n')],
    ['cm.yaml', textFile('data: {API: https://a}\n')],
  ]),
}

let dir: string
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kpt-variants-memo-'))))
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** Records `rendered` for the variant of `before`, saves, and looks up `stored` for the variant of `after`, as a next run would. */
function recordThenLookup(
  before: ReturnType<typeof planned>,
  after: ReturnType<typeof planned>,
  stored: StoredPackage,
  scope: 'injectors' | 'fleet' = 'injectors',
) {
  const file = join(dir, 'memo.json')
  const memo = RenderMemo.open(file, before.fleet, settings)
  memo.save(
    new Map([
      [
        'edge-01/nginx',
        memo.entry(before.variant, scope, rendered, {
          warnings: ['w'],
          injected: ['ConfigMap cm <- us-east1-endpoints'],
        }),
      ],
    ]),
  )
  const next = RenderMemo.open(file, after.fleet, settings)
  const entry = next.recorded(after.variant, 'edge-01/nginx')
  return entry && next.sameFiles(entry, stored) ? entry : undefined
}

describe('the record of earlier renders', () => {
  test('the same inputs and the same downstream files: the recorded render, with its warnings and injected objects', () => {
    expect(recordThenLookup(planned(), planned(), rendered)).toMatchObject({
      warnings: ['w'],
      injected: ['ConfigMap cm <- us-east1-endpoints'],
    })
  })

  test('a changed byte, a changed mode, a missing or extra file, or a draft on top: rendered again', () => {
    const changed = new Map(rendered.published)
    changed.set('cm.yaml', textFile('data: {API: https://b}\n'))
    const executable = new Map(rendered.published)
    executable.set('cm.yaml', textFile('data: {API: https://a}\n', true))
    const missing = new Map(rendered.published)
    missing.delete('cm.yaml')
    const extra = new Map(rendered.published)
    extra.set('notes.txt', textFile(''))
    for (const published of [changed, executable, missing, extra])
      expect(recordThenLookup(planned(), planned(), { published })).toBeUndefined()
    expect(recordThenLookup(planned(), planned(), { ...rendered, draft: rendered.published! })).toBeUndefined()
  })

  test('another upstream commit, or another value of an injectable object: rendered again', () => {
    expect(recordThenLookup(planned(), planned({ commit: 'c2' }), rendered)).toBeUndefined()
    expect(recordThenLookup(planned(), planned({ api: 'https://b' }), rendered)).toBeUndefined()
  })

  test('an object no injector names counts only when the pipeline ran our functions over the whole fleet', () => {
    expect(recordThenLookup(planned(), planned({ other: 'two' }), rendered, 'injectors')).toBeDefined()
    expect(recordThenLookup(planned(), planned({ other: 'two' }), rendered, 'fleet')).toBeUndefined()
  })

  test('saving keeps the entries of paths the run did not render and drops those of failed ones; a damaged record is empty', () => {
    const file = join(dir, 'memo.json')
    const { fleet, variant } = planned()
    const memo = RenderMemo.open(file, fleet, settings)
    const entry = memo.entry(variant, 'injectors', rendered, { warnings: [] })
    memo.save(
      new Map([
        ['edge-01/nginx', entry],
        ['edge-02/nginx', entry],
      ]),
    )
    RenderMemo.open(file, fleet, settings).save(new Map([['edge-02/nginx', undefined]]))
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')).entries)).toEqual(['edge-01/nginx'])
    writeFileSync(file, '{"version": 1, "entries": ')
    expect(RenderMemo.open(file, fleet, settings).recorded(variant, 'edge-01/nginx')).toBeUndefined()
  })

  test('--force: the record answers nothing, and what the run rendered is recorded all the same', () => {
    const file = join(dir, 'memo.json')
    const { fleet, variant } = planned()
    const first = RenderMemo.open(file, fleet, settings)
    first.save(new Map([['edge-01/nginx', first.entry(variant, 'injectors', rendered, { warnings: ['first'] })]]))
    const forced = RenderMemo.open(file, fleet, settings, RenderMemo.read(file), true)
    expect(forced.recorded(variant, 'edge-01/nginx')).toBeUndefined()
    forced.save(new Map([['edge-02/nginx', forced.entry(variant, 'injectors', rendered, { warnings: ['forced'] })]]))
    const next = RenderMemo.open(file, fleet, settings)
    expect([
      next.recorded(variant, 'edge-01/nginx')?.warnings,
      next.recorded(variant, 'edge-02/nginx')?.warnings,
    ]).toEqual([['first'], ['forced']])
  })

  test('a package renamed into place just now is not trusted, even when its files are older', () => {
    const staged = join(dir, 'staged')
    mkdirSync(staged, { recursive: true })
    writeFileSync(join(staged, 'Kptfile'), 'kind: Kptfile\n')
    // The present is 2 s after the files were written: they are past the racy window; the rename, stamped later, is not.
    const written = msOf(
      lstatSync(staged, { bigint: true }).ctimeNs,
      lstatSync(join(staged, 'Kptfile'), { bigint: true }).ctimeNs,
    )
    untilFilesStampedAfter(written + 1)
    const present = written + 2001
    expect(statPackageDirectory(staged, present)).toMatch(/^[0-9a-f]{64}$/)
    renameSync(staged, join(dir, 'pkg'))
    expect(statPackageDirectory(join(dir, 'pkg'), present)).toBeUndefined()
    expect(statPackageDirectory(join(dir, 'pkg'), Date.now() + 5000)).toMatch(/^[0-9a-f]{64}$/)
  })

  test("a package's metadata digest: trusted two seconds after the last write, changed by any edit, addition, removal or mode", async () => {
    const pkg = join(dir, 'pkg')
    mkdirSync(join(pkg, 'sub'), { recursive: true })
    writeFileSync(join(pkg, 'Kptfile'), 'kind: Kptfile\n')
    writeFileSync(join(pkg, 'sub', 'cm.yaml'), 'data: {}\n')
    expect(statPackageDirectory(pkg)).toBeUndefined()
    const later = Date.now() + 5000
    const before = statPackageDirectory(pkg, later)!
    expect(before).toMatch(/^[0-9a-f]{64}$/)
    expect(statPackageDirectory(pkg, later)).toBe(before)
    const back = new Date(Date.now() - 1000)
    const changes: (() => void)[] = [
      () => writeFileSync(join(pkg, 'sub', 'cm.yaml'), 'data: {a: b}\n'),
      // The same size, and the modification time set back below: the change time still moves.
      () => writeFileSync(join(pkg, 'sub', 'cm.yaml'), 'data: {a: c}\n'),
      () => writeFileSync(join(pkg, 'notes.txt'), ''),
      () => rmSync(join(pkg, 'notes.txt')),
      () => chmodSync(join(pkg, 'Kptfile'), 0o755),
    ]
    let previous = before
    for (const change of changes) {
      // A clock tick between changes, so that change times differ.
      untilFilesStampedAfter()
      change()
      // Even with the modification time set back, the inode change time moves.
      for (const f of ['Kptfile', 'sub/cm.yaml']) utimesSync(join(pkg, f), back, back)
      const now = statPackageDirectory(pkg, Date.now() + 5000)
      expect(now).not.toBe(previous)
      previous = now!
    }
    expect(statPackageDirectory(join(dir, 'missing'), later)).toBeUndefined()
  })
})

/** The latest of some change times (nanoseconds), in milliseconds, rounded up. */
function msOf(...times: bigint[]): number {
  return Math.ceil(Number(times.reduce((a, b) => (a > b ? a : b))) / 1e6)
}

/**
 * Waits (without a timer) until the file system stamps a change after `ms`
 * (default: after everything changed so far): what changes next is stamped
 * later. Its clock is the kernel's coarse one, which can lag the process
 * clock by a tick, so it is asked, not assumed.
 */
function untilFilesStampedAfter(ms?: number): void {
  const probe = join(dir, 'clock-probe')
  const stamp = () => {
    writeFileSync(probe, '')
    return lstatSync(probe, { bigint: true }).ctimeNs
  }
  const after = ms === undefined ? stamp() : BigInt(ms) * 1_000_000n
  while (stamp() <= after) {
    // A tick of the kernel's clock is a few milliseconds at most.
  }
  rmSync(probe)
}
