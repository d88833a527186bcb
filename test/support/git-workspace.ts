/** The workspace of the `kpt-variants render --git` e2e tests (render-git*.e2e.test.ts), and how they crash a run. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, runCliOk, startCli } from './cli-run.js'
import type { Run } from './cli-run.js'
import type { ResultPromise } from 'execa'
import { createBlueprints, fleetFiles, threeClusters } from './fleet.js'
import type { FleetOptions } from './fleet.js'
import { createRepo, git, writeTree } from './git-repo.js'

export const timeout = 60_000

export type { Run }

/** Resolves once the run says it is held at `point`; rejects if it ends first (it never reached the point). */
export function stoppedAt(child: ResultPromise, point: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = ''
    const listening = (chunk: Buffer) => {
      said += String(chunk)
      if (!said.includes(`kpt-variants: stopped at ${point}\n`)) return
      child.stderr!.off('data', listening)
      resolve()
    }
    child.stderr!.on('data', listening)
    void child.then((result) =>
      reject(new Error(`the run ended (exit ${result.exitCode}) before stop point ${point}:\n${said}`)),
    )
  })
}

/**
 * Kills a run's node process alone, as a crash would, and waits for the git
 * processes it had started: they outlive it (a push killed with its parent
 * still completes), and the next run racing one would meet a remote that
 * moves under it, a lease refused (the run fails that variant, as it should)
 * rather than the crash the test is about.
 */
export async function crash(child: ResultPromise): Promise<void> {
  child.kill('SIGSTOP') // so that it starts no process while its children are listed
  const parents = new Map<number, number>()
  const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  for (const pid of pids.map(Number)) {
    const stat = processStat(pid)
    if (stat) parents.set(pid, stat.ppid)
  }
  const descends = (pid: number): boolean =>
    pid === child.pid || (pid > 1 && parents.has(pid) && descends(parents.get(pid)!))
  const left = [...parents.keys()].filter((pid) => pid !== child.pid && descends(pid))
  child.kill('SIGKILL')
  await child
  // Gone, or a zombie that init has not reaped yet.
  const running = (pid: number) => ![undefined, 'Z'].includes(processStat(pid)?.state)
  while (left.some(running)) await new Promise((r) => setTimeout(r, 20))
}

/** A process's state and parent, from `/proc/<pid>/stat` (`pid (comm) state ppid ...`); undefined once it is gone. */
function processStat(pid: number): { state: string; ppid: number } | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  const [state = '', ppid = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { state, ppid: Number(ppid) }
}

/** A test's directory: the blueprint repository, three downstream repositories, the fleet, the cache. */
/** The runs `heldAt` started, until `killHeldRuns`. */
const heldRuns = new Set<ResultPromise>()

/**
 * `kpt-variants ARGS` in `dir` held at stop point `point` (`env` over git's identity): resolves once it is
 * there, with the running process (in an object: a process is a promise). Call `killHeldRuns` after each test.
 */
export async function heldAt(
  dir: string,
  point: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: ResultPromise }> {
  const child = startCli(dir, args, { env: { ...env, KPT_VARIANTS_TEST_STOP_AT: point } })
  heldRuns.add(child)
  await stoppedAt(child, point)
  return { child }
}

/** Kills the runs still held: one a failed test left waiting would keep jest waiting too. */
export async function killHeldRuns(): Promise<void> {
  for (const child of heldRuns) child.kill('SIGKILL')
  await Promise.all(heldRuns)
  heldRuns.clear()
}

export class Workspace {
  readonly fleet: string
  readonly cache: string

  private constructor(readonly dir: string) {
    this.fleet = join(dir, 'fleet')
    this.cache = join(dir, 'cache')
  }

  static async create(options: Partial<FleetOptions> = {}): Promise<Workspace> {
    const ws = new Workspace(mkdtempSync(join(tmpdir(), 'kpt-variants-git-e2e-')))
    await createBlueprints(join(ws.dir, 'repos', 'blueprints'))
    // edge-01, edge-02: empty bare repositories, named by path (`../repos/edge-01` finds `edge-01.git`).
    for (const name of ['edge-01', 'edge-02'])
      await git(ws.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
    // edge-03: an ordinary repository with a first commit, by file:// URL; a push may update its checked-out branch.
    await createRepo(join(ws.dir, 'repos', 'edge-03'), [['start', { 'README.md': '# edge-03\n' }]])
    await git(join(ws.dir, 'repos', 'edge-03'), 'config', 'receive.denyCurrentBranch', 'updateInstead')
    ws.writeFleet({ clusters: threeClusters, ...options })
    return ws
  }

  writeFleet(options: FleetOptions): void {
    rmSync(this.fleet, { recursive: true, force: true })
    const files = fleetFiles(options)
    files['repositories.yaml'] = files['repositories.yaml']!.replace(
      'repo: ../repos/edge-03',
      `repo: file://${this.dir}/repos/edge-03`,
    )
    writeTree(this.fleet, files)
  }

  remote(name: string): string {
    return join(this.dir, 'repos', name === 'edge-03' ? name : `${name}.git`)
  }

  run(...args: string[]): Promise<Run> {
    return runCli(this.dir, args)
  }

  ok(...args: string[]): Promise<Run> {
    return runCliOk(this.dir, args)
  }

  /** `render fleet --git --cache cache --json <args>`: the parsed report. */
  async render(...args: string[]): Promise<{
    run: Run
    report: {
      variants: {
        path?: string
        status: string
        draft?: string
        published?: string
        reasons: { code: string; message: string }[]
      }[]
    }
  }> {
    const run = await this.run('render', 'fleet', '--git', '--cache', 'cache', '--json', ...args)
    return { run, report: JSON.parse(run.stdout) }
  }

  /** Every branch and tag of a downstream repository, with the commit it names. */
  async refs(name: string): Promise<Record<string, string>> {
    const out = await git(this.remote(name), 'for-each-ref', '--format=%(refname) %(objectname)')
    return Object.fromEntries(
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ') as [string, string]),
    )
  }

  async show(name: string, rev: string): Promise<string> {
    return git(this.remote(name), 'show', rev)
  }
}
