/**
 * A remote upstream repository (served by `git daemon` over git://): cloned
 * into the cache once, then fetched each run; and rendered on several
 * threads, which read it at the refs the main thread listed.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import type { ResultPromise } from 'execa'
import { createFleet, setText } from '../bench/fleet-fixture.js'
import { runCli } from './support/cli-run.js'
import type { Run } from './support/cli-run.js'
import { pastRacyWindowMs, TestClock } from './support/clock.js'
import { treeWithModesAndBytes } from './support/files.js'
import { git } from './support/git-repo.js'

const timeout = 120_000

/** A port no one listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** `git daemon` serving every repository below `base` on a free port; resolves once it listens (it says so on stderr). */
async function serve(base: string): Promise<{ url: (repo: string) => string; daemon: ResultPromise }> {
  const port = await freePort()
  const daemon = execa(
    'git',
    [
      'daemon',
      '--verbose',
      `--base-path=${base}`,
      '--export-all',
      '--reuseaddr',
      '--listen=127.0.0.1',
      `--port=${port}`,
      base,
    ],
    { reject: false },
  )
  const url = (repo: string) => `git://127.0.0.1:${port}/${repo}`
  await new Promise<void>((resolve, reject) => {
    let said = ''
    const listening = (chunk: Buffer) => {
      said += String(chunk)
      if (!said.includes('Ready to rumble')) return
      daemon.stderr.off('data', listening)
      resolve()
    }
    daemon.stderr.on('data', listening)
    void daemon.then((result) => reject(new Error(`git daemon exited ${result.exitCode} before it listened:\n${said}`)))
  })
  return { url, daemon }
}

let dir: string
let daemon: ResultPromise | undefined
/** The time the test's renders run at. */
let clock: TestClock
beforeEach(() => (clock = new TestClock()))
afterEach(() => {
  daemon?.kill()
  daemon = undefined
  rmSync(dir, { recursive: true, force: true })
})

/** A fleet of `variants` whose blueprints repository is served over git://. */
async function remoteFleet(variants: number): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-remote-'))
  await createFleet(dir, { variants, resources: 8 })
  const served = await serve(join(dir, 'repos'))
  daemon = served.daemon
  const repositories = join(dir, 'fleet', 'repositories.yaml')
  writeFileSync(
    repositories,
    readFileSync(repositories, 'utf8').replace('repo: ../repos/blueprints', `repo: ${served.url('blueprints')}`),
  )
}

/** Runs `kpt-variants render fleet --out OUT --json` with the test's cache; a failing run resolves too. */
function renderRun(out: string, extra: string[] = [], env: Record<string, string> = {}): Promise<Run> {
  return runCli(dir, ['render', 'fleet', '--out', out, '--cache', 'cache', '--json', '--no-progress', ...extra], {
    env: { ...clock.env(), ...env },
  })
}

/** The report of a render that succeeded. */
function reportOf(run: Run): { summary: Record<string, number> } {
  if (run.exitCode !== 0) throw new Error(`kpt-variants render exited ${run.exitCode}:\n${run.stderr}`)
  return JSON.parse(run.stdout) as { summary: Record<string, number> }
}

async function render(out: string, ...extra: string[]): Promise<{ summary: Record<string, number> }> {
  return reportOf(await renderRun(out, extra))
}

/** Renders into `out` as `render` does; resolves to the summary and how many times git fetched or cloned. */
async function renderCounting(
  out: string,
): Promise<{ summary: Record<string, number>; asked: number; clones: number }> {
  const trace = join(dir, `git-trace-${Date.now()}`)
  const report = reportOf(await renderRun(out, [], { GIT_TRACE: trace }))
  const commands = readFileSync(trace, 'utf8').split('\n')
  const count = (command: string) => commands.filter((line) => line.includes(`built-in: git ${command} `)).length
  // Asked: the remote's refs listed, which a fetch does first (a clone up to date lists them and fetches nothing).
  return { ...report, asked: count('fetch') + count('ls-remote'), clones: count('clone') }
}

test(
  'a remote upstream is cloned into the cache once, then fetched: a revision tagged upstream is there on the next run',
  async () => {
    await remoteFleet(3)
    expect((await render('out')).summary.created).toBe(3)
    const clones = readdirSync(join(dir, 'cache', 'upstreams')).filter((name) => name.endsWith('.git'))
    expect(clones).toEqual([expect.stringMatching(/^blueprints-[0-9a-f]{12}\.git$/)])
    // Gone if a later run cloned the repository again instead of fetching into it.
    const marker = join(dir, 'cache', 'upstreams', clones[0]!, 'kept-between-runs')
    writeFileSync(marker, '')

    // Revision 3 is tagged upstream after the first run, and the set moves to it.
    const upstream = join(dir, 'repos', 'blueprints')
    writeFileSync(
      join(upstream, 'app', 'svc-000.yaml'),
      readFileSync(join(upstream, 'app', 'svc-000.yaml'), 'utf8').replace('replicas: 2', 'replicas: 3'),
    )
    await git(upstream, 'commit', '-q', '-am', 'app v3')
    await git(upstream, 'tag', 'app/v3')
    writeFileSync(join(dir, 'fleet', 'set.yaml'), setText(3))
    expect((await render('out')).summary.updated).toBe(3)
    expect(readFileSync(join(dir, 'out', 'edge-00000', 'app', 'svc-000.yaml'), 'utf8')).toContain('replicas: 3')
    expect(existsSync(marker)).toBe(true)
    expect(readdirSync(join(dir, 'cache', 'upstreams')).filter((name) => name.endsWith('.git'))).toEqual(clones)
  },
  timeout,
)

test(
  'a run asks a remote upstream once, also when a re-render in which nothing could change turns out to have changes',
  async () => {
    await remoteFleet(3)
    expect(await renderCounting('out')).toMatchObject({ summary: { created: 3 }, asked: 0, clones: 1 })
    // Past the two seconds in which a written file's metadata is not trusted: this run records them, and the whole run.
    clock.advance(pastRacyWindowMs)
    expect(await renderCounting('out')).toMatchObject({ summary: { unchanged: 3 }, asked: 1, clones: 0 })
    expect(readdirSync(join(dir, 'cache', 'quiet-runs'))).toHaveLength(1)
    // Answered from the record of the whole run, after one fetch.
    expect(await renderCounting('out')).toMatchObject({ summary: { unchanged: 3 }, asked: 1, clones: 0 })
    // A package edited: the check finds it changed, and the full run reads the upstream as the check fetched it.
    const edited = join(dir, 'out', 'edge-00001', 'app', 'svc-000.yaml')
    writeFileSync(edited, readFileSync(edited, 'utf8').replace('replicas: 2', 'replicas: 4'))
    expect(await renderCounting('out')).toMatchObject({ summary: { unchanged: 3 }, asked: 1, clones: 0 })
  },
  timeout,
)

test(
  "a remote upstream another live run is fetching fails its set after --lock-timeout; a dead run's lock is taken over",
  async () => {
    await remoteFleet(3)
    await render('out')
    const clone = readdirSync(join(dir, 'cache', 'upstreams')).find((name) => name.endsWith('.git'))!
    const lock = join(dir, 'cache', 'upstreams', `${clone}.lock`)
    const holder = execa('sleep', ['30'], { reject: false })
    writeFileSync(lock, `${holder.pid} ${hostname()}\n`)
    try {
      const locked = await renderRun('out', ['--lock-timeout', '0.3'])
      expect(locked.exitCode).toBe(1)
      const report = JSON.parse(locked.stdout) as {
        summary: Record<string, number>
        variants: { subject: string; reasons: { code: string; message: string }[] }[]
      }
      // The set cannot be planned without its upstream's revisions: it fails as a whole, and its packages stay.
      expect(report.variants).toEqual([
        expect.objectContaining({
          subject: 'PackageVariantSet default/app',
          reasons: [
            {
              code: 'UpstreamNotFound',
              message: expect.stringContaining(
                `upstream repository "blueprints" cannot be read: another kpt-variants run (process ${holder.pid} on ${hostname()}) holds the lock`,
              ),
            },
          ],
        }),
      ])
      expect(readdirSync(join(dir, 'out'))).toHaveLength(3)
    } finally {
      holder.kill('SIGKILL')
      await holder
    }
    expect((await render('out', '--lock-timeout', '0.3')).summary.unchanged).toBe(3)
    expect(existsSync(lock)).toBe(false)
  },
  timeout,
)

describe.each([
  // As in threads.e2e.test.ts: workers start after the main thread has planned, or at once beside it.
  [130, 'after planning'],
  [200, 'at once'],
])('%i variants (workers start %s)', (variants) => {
  test(
    'two threads render from the remote upstream what one thread renders',
    async () => {
      await remoteFleet(variants)
      const [one, two] = [await render('out-1', '--threads', '1'), await render('out-2', '--threads', '2')]
      expect(one.summary.created).toBe(variants)
      expect(two).toEqual(one)
      expect(treeWithModesAndBytes(join(dir, 'out-2'))).toEqual(treeWithModesAndBytes(join(dir, 'out-1')))
    },
    timeout,
  )
})
