/**
 * Two renders of the same fleet at once, as real processes: into one
 * output directory (`--out`), and into the same repositories from two
 * caches (`--git`, two machines: no lock file in common). One run at a time
 * writes an output directory; two --git runs are kept apart by their
 * pushes' leases. Either way every package is written once, whole, and
 * the next run has nothing to do. (Two --git runs sharing a cache wait
 * for each other's lock: test/render-git-concurrency.e2e.test.ts.)
 */
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { execa } from 'execa'
import { repoRoot } from '../e2e/runner.js'
import { expectComplete, refsOf, stackLines } from '../support/faults.js'
import { threeClusters } from '../support/fleet.js'
import { treeWithModesAndBytes } from '../support/files.js'
import { heldAt, killHeldRuns, timeout, Workspace } from '../support/git-workspace.js'

interface Report {
  variants: { path: string; status: string; reasons: { code: string; message: string }[] }[]
}

afterEach(killHeldRuns)

const statuses = (stdout: string) => (JSON.parse(stdout) as Report).variants.map((v) => v.status)

describe('two renders of the same fleet at once', () => {
  let ws: Workspace
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  /** The fleet rendered alone into `reference`: what the output must be. */
  const reference = async () => {
    await ws.ok('render', 'fleet', '--out', 'reference', '--cache', 'reference-cache')
    return treeWithModesAndBytes(join(ws.dir, 'reference'))
  }

  test(
    '--out: two renders started together never interleave: one writes every package, the other waits for it and finds nothing to do',
    async () => {
      ws = await Workspace.create()
      const [a, b] = await Promise.all(
        ['cache-a', 'cache-b'].map((cache) => ws.run('render', 'fleet', '--out', 'out', '--cache', cache, '--json')),
      )
      expect([a!.exitCode, b!.exitCode]).toEqual([0, 0])
      expect([statuses(a!.stdout).join(), statuses(b!.stdout).join()].sort()).toEqual([
        'created,created,created',
        'unchanged,unchanged,unchanged',
      ])
      expect(treeWithModesAndBytes(join(ws.dir, 'out'))).toEqual(await reference())
      expect(existsSync(join(ws.dir, 'out', '.kpt-variants.lock'))).toBe(false)
    },
    timeout,
  )

  test(
    '--out: a render that holds the output directory keeps another out: after --lock-timeout it fails naming the holder and writes nothing; the next run finds nothing to do',
    async () => {
      ws = await Workspace.create()
      const { child: held } = await heldAt(ws.dir, 'rendered', [
        'render',
        'fleet',
        '--out',
        'out',
        '--cache',
        'cache-a',
      ])
      const locked = await ws.run('render', 'fleet', '--out', 'out', '--cache', 'cache-b', '--lock-timeout', '0.5')
      expect(locked.exitCode).toBe(1)
      expect(locked.stderr).toBe(
        `kpt-variants: another kpt-variants run (process ${held.pid} on ${(await execa('hostname')).stdout}) holds the lock ${join(ws.dir, 'out', '.kpt-variants.lock')} (--debug prints where it failed)`,
      )
      expect(stackLines(locked.stderr)).toEqual([])
      // Nothing written by either yet: the held run's lock and what it staged, no package.
      expect(readdirSync(join(ws.dir, 'out')).filter((name) => !name.startsWith('.kpt-variants-staging-'))).toEqual([
        '.kpt-variants.lock',
      ])
      held.kill('SIGUSR2')
      const first = await held
      expect(first.exitCode).toBe(0)
      expect(String(first.stderr)).toMatch(/3 variant\(s\): 3 created, 0 updated, 0 unchanged, 0 failed$/m)
      const expected = await reference()
      expect(treeWithModesAndBytes(join(ws.dir, 'out'))).toEqual(expected)

      const second = await ws.run('render', 'fleet', '--out', 'out', '--cache', 'cache-b', '--json')
      expect(statuses(second.stdout)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(treeWithModesAndBytes(join(ws.dir, 'out'))).toEqual(expected)
    },
    timeout,
  )

  test(
    'runs that take a lock at the same moment never hold it together (the lock of an output directory or of a repository)',
    async () => {
      ws = await Workspace.create()
      // Threads of one process race for a fresh lock file each round, started together by a barrier; each counts
      // the holders it finds beside itself. A lock file created empty and written after was taken for garbage by
      // a racer reading it in between: 10-19 rounds of 50 had two holders.
      const workers = 4
      const rounds = 25
      const shared = new SharedArrayBuffer(8)
      const code = `
        const { workerData, parentPort } = require('node:worker_threads')
        const state = new Int32Array(workerData.shared)
        ;(async () => {
          const { acquireLock } = await import(workerData.module)
          let together = 0
          for (let round = 0; round < workerData.rounds; round++) {
            const target = (round + 1) * workerData.workers
            if (Atomics.add(state, 1, 1) + 1 === target) Atomics.notify(state, 1)
            else for (let seen = Atomics.load(state, 1); seen < target; seen = Atomics.load(state, 1)) Atomics.wait(state, 1, seen)
            const lock = await acquireLock(workerData.dir + '/round-' + round + '.lock', 30000)
            if (Atomics.add(state, 0, 1) !== 0) together++
            await new Promise((resolve) => setTimeout(resolve, 2))
            Atomics.sub(state, 0, 1)
            lock.release()
          }
          parentPort.postMessage(together)
        })()`
      const workerData = {
        shared,
        module: join(repoRoot, 'dist', 'orchestrator', 'git', 'lock.js'),
        rounds,
        workers,
        dir: ws.dir,
      }
      const together = await Promise.all(
        Array.from(
          { length: workers },
          () =>
            new Promise<number>((resolve, reject) => {
              const worker = new Worker(code, { eval: true, workerData })
              worker.once('message', resolve)
              worker.once('error', reject)
            }),
        ),
      )
      expect(together).toEqual([0, 0, 0, 0])
      expect(readdirSync(ws.dir).filter((name) => name.includes('.lock'))).toEqual([])
    },
    timeout,
  )

  test(
    '--git from two caches: the run that pushes second is refused by its leases and says so; one draft per package, and its next run finds them as it wants them',
    async () => {
      ws = await Workspace.create()
      // Another machine commits as another committer: the same identity within the same second would make the
      // same commits, whose push git finds already done (exit 0, nothing lost), which is not the case under test.
      const { child: held } = await heldAt(
        ws.dir,
        'git-commits-imported',
        ['render', 'fleet', '--git', '--cache', 'cache-a', '--json'],
        { GIT_COMMITTER_NAME: 'render on machine A' },
      )
      const other = await ws.run('render', 'fleet', '--git', '--cache', 'cache-b', '--json')
      expect(other.exitCode).toBe(0)
      expect(statuses(other.stdout)).toEqual(['created', 'created', 'created'])
      const pushed = await Promise.all(threeClusters.map((c) => refsOf(ws.remote(c.name))))

      held.kill('SIGUSR2')
      const late = await held
      expect(late.exitCode).toBe(1)
      expect(stackLines(String(late.stderr))).toEqual([])
      for (const v of (JSON.parse(String(late.stdout)) as Report).variants)
        expect({ path: v.path, status: v.status, reasons: v.reasons }).toEqual({
          path: v.path,
          status: 'failed',
          reasons: [
            {
              code: 'GitPushRefused',
              message: expect.stringMatching(
                /^pushing to \S+ was refused: refs\/heads\/drafts\/nginx\/packagevariant-1 \[rejected\] \(stale info\)$/,
              ),
            },
          ],
        })
      // Refused whole: the repositories are as the other run left them.
      expect(await Promise.all(threeClusters.map((c) => refsOf(ws.remote(c.name))))).toEqual(pushed)
      for (const c of threeClusters) await expectComplete(ws.remote(c.name))

      const next = await ws.run('render', 'fleet', '--git', '--cache', 'cache-a', '--json')
      expect(next.exitCode).toBe(0)
      expect(statuses(next.stdout)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await Promise.all(threeClusters.map((c) => refsOf(ws.remote(c.name))))).toEqual(pushed)
    },
    timeout,
  )
})
