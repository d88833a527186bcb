/**
 * `render --out` when the disk fills up, on a real small filesystem: a
 * tmpfs mounted for the test (as root, or through `sudo -n`; where neither
 * can mount, the suite is skipped with a warning, and fails in CI). The
 * demo fleet (12 clusters, 7 of which need cert-manager installed beside
 * nginx) is rendered onto a filesystem too small for it, then the space is
 * given back: each package is written whole or not at all, a package is
 * never written without the dependency it needs, the messages name the
 * package and the cause, and the next run completes the fleet byte for byte
 * as a render with room to spare, the one after changing nothing.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDemoFleet } from '../../scripts/demo-fleet.js'
import { runCli, runCliOk } from '../support/cli-run.js'
import { stackLines } from '../support/faults.js'
import { describeIfAvailable } from '../support/requires.js'
import { treeWithModesAndBytes } from '../support/files.js'

const timeout = 120_000

/** `mount`/`umount` as this process may run them: itself as root, else through `sudo -n`; undefined when neither can. */
function mounter(): ((args: string[]) => void) | undefined {
  const probe = mkdtempSync(join(tmpdir(), 'kpt-variants-mount-probe-'))
  try {
    for (const prefix of process.getuid?.() === 0 ? [[]] : [['sudo', '-n']]) {
      const run = (args: string[]) => {
        const [command, ...rest] = [...prefix, ...args]
        execFileSync(command!, rest, { stdio: 'pipe' })
      }
      try {
        run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe])
        run(['umount', probe])
        return run
      } catch {
        // cannot: try the next way, or none
      }
    }
    return undefined
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}

const mount = mounter()
const suite = describeIfAvailable(
  mount !== undefined,
  'test/faults/disk-full.e2e.test.ts: the disk-full tests need to mount a tmpfs (as root, or with `sudo -n mount`)',
)

interface Report {
  variants: { path: string; subject: string; status: string; reasons: { code: string; message: string }[] }[]
  dependencies?: { name: string; steps: { package: string; path: string; outcome: string; reason?: string }[] }[]
}

suite('render --out onto a disk that fills up', () => {
  let dir: string
  let small: string
  /** The demo fleet rendered with room to spare: what every package must be. */
  let reference: Record<string, string>
  let referencePackages: string[]
  /** A tmpfs size that holds about half the reference's files (each takes a page at least). */
  let halfSize: number

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-disk-full-'))
    await createDemoFleet(join(dir, 'demo'))
    await runCliOk(dir, ['render', 'demo/fleet', '--out', 'reference', '--cache', 'reference-cache'])
    reference = treeWithModesAndBytes(join(dir, 'reference'))
    referencePackages = packagesIn(join(dir, 'reference'))
    const page = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim())
    halfSize = page * Math.ceil(Object.keys(reference).length / 2)
    small = join(dir, 'small')
    mkdirSync(small)
  }, timeout)

  afterEach(() => unmount())

  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  /** Every `repo/package` directory below an output directory. */
  function packagesIn(out: string): string[] {
    return readdirSync(out)
      .filter((repo) => !repo.startsWith('.'))
      .flatMap((repo) => readdirSync(join(out, repo)).map((pkg) => `${repo}/${pkg}`))
      .sort()
  }

  /** The files of `pkg` in a tree of treeWithModesAndBytes. */
  const filesOf = (tree: Record<string, string>, pkg: string) =>
    Object.fromEntries(Object.entries(tree).filter(([path]) => path.startsWith(`${pkg}/`)))

  function unmount(): void {
    try {
      mount!(['umount', small])
    } catch {
      // not mounted
    }
  }

  test(
    'staging fills the disk: each package is whole or absent, none without its dependency; with room, the next run completes the fleet',
    async () => {
      // 256 KiB with 4 KiB pages: the demo fleet's 126 files need about twice that.
      mount!(['mount', '-t', 'tmpfs', '-o', `size=${halfSize}`, 'tmpfs', small])
      const first = await runCli(dir, ['render', 'demo/fleet', '--out', 'small/out', '--cache', 'cache', '--json'])
      expect(first.exitCode).toBe(1)
      expect(stackLines(first.stderr)).toEqual([])
      const report = JSON.parse(first.stdout) as Report
      const failed = report.variants.filter((v) => v.status === 'failed')
      const written = report.variants.filter((v) => v.status === 'created')
      // The disk filled part of the way: some written, some not.
      expect(failed.length).toBeGreaterThan(0)
      expect(written.length).toBeGreaterThan(0)
      for (const v of failed)
        expect({ path: v.path, reasons: v.reasons }).toEqual({
          path: v.path,
          reasons: [
            {
              code: expect.stringMatching(/^(WriteFailed|DependencyFailed)$/),
              message: expect.stringMatching(
                /^(dependency cert-manager v1\.14\.4 could not be installed in repository edge-\d+: )?cannot write the package: ENOSPC: no space left on device/,
              ),
            },
          ],
        })
      expect(first.stderr).toMatch(/^ {2}edge-\d+\/\S+: cannot write the package: ENOSPC: no space left on device/m)

      const out = join(dir, 'small', 'out')
      const tree = treeWithModesAndBytes(out)
      const present = packagesIn(out)
      // Exactly the packages reported written, each byte for byte as with room to spare; nothing staged is left.
      expect(present).toEqual(written.map((v) => v.path).sort())
      for (const pkg of present)
        expect({ pkg, files: filesOf(tree, pkg) }).toEqual({ pkg, files: filesOf(reference, pkg) })
      expect(readdirSync(out).filter((name) => name.startsWith('.'))).toEqual([])
      // No nginx without the cert-manager it needs; a dependency step is done exactly when its package was written.
      for (const pkg of referencePackages.filter((p) => p.endsWith('/cert-manager'))) {
        const repo = pkg.split('/')[0]!
        if (present.includes(`${repo}/nginx`)) expect(present).toContain(pkg)
      }
      const steps = (report.dependencies ?? []).flatMap((r) =>
        r.steps.map((s) => ({ path: `${r.name}/${s.path}`, outcome: s.outcome })),
      )
      expect(steps.length).toBeGreaterThan(0)
      for (const step of steps)
        expect(step).toEqual({ path: step.path, outcome: present.includes(step.path) ? 'done' : 'failed' })
      const installed = steps.filter((s) => s.outcome === 'done').length
      expect(first.stderr).toMatch(new RegExp(`dependencies: ${installed} installed,`))

      // Room again: the next run writes the rest, the one after nothing.
      mount!(['mount', '-o', `remount,size=${8 * halfSize}`, small])
      const second = await runCli(dir, ['render', 'demo/fleet', '--out', 'small/out', '--cache', 'cache', '--json'])
      expect(second.exitCode).toBe(0)
      expect(treeWithModesAndBytes(out)).toEqual(reference)
      const third = await runCli(dir, ['render', 'demo/fleet', '--out', 'small/out', '--cache', 'cache', '--json'])
      expect(third.exitCode).toBe(0)
      const settled = (JSON.parse(third.stdout) as Report).variants
      expect(settled.filter((v) => v.status !== 'unchanged')).toEqual([])
      expect(treeWithModesAndBytes(out)).toEqual(reference)
    },
    timeout,
  )

  test(
    'the cache on a full disk: the run fails naming the file it cannot write, and writes nothing half; with room, the next run completes',
    async () => {
      mount!(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', small])
      // Full to the last block.
      try {
        writeFileSync(join(small, 'filler'), Buffer.alloc(128 * 1024))
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC')
      }
      const out = join(dir, 'roomy-out')
      const first = await runCli(dir, ['render', 'demo/fleet', '--out', 'roomy-out', '--cache', 'small/cache'])
      expect(first.exitCode).toBe(1)
      expect(first.stderr).toMatch(
        /^kpt-variants: cannot write .*\/small\/cache\/\S+\.json: ENOSPC: no space left on device, write \(--debug prints where it failed\)$/m,
      )
      expect(stackLines(first.stderr)).toEqual([])
      // No temporary file left in the cache; the output holds whole packages only.
      const leftovers = execFileSync('find', [join(small, 'cache'), '-name', '*.tmp'], { encoding: 'utf8' })
      expect(leftovers).toBe('')
      const written = existsSync(out) ? packagesIn(out) : []
      const tree = existsSync(out) ? treeWithModesAndBytes(out) : {}
      for (const pkg of written)
        expect({ pkg, files: filesOf(tree, pkg) }).toEqual({ pkg, files: filesOf(reference, pkg) })

      rmSync(join(small, 'filler'))
      const second = await runCli(dir, ['render', 'demo/fleet', '--out', 'roomy-out', '--cache', 'small/cache'])
      expect(second.exitCode).toBe(0)
      expect(treeWithModesAndBytes(out)).toEqual(reference)
      const third = await runCli(dir, ['render', 'demo/fleet', '--out', 'roomy-out', '--cache', 'small/cache'])
      expect(third.exitCode).toBe(0)
      expect(third.stderr).toMatch(/12 variant\(s\): 0 created, 0 updated, 12 unchanged, 0 failed$/m)
      expect(treeWithModesAndBytes(out)).toEqual(reference)
    },
    timeout,
  )
})
