/**
 * The workspace of the `kpt-variants render FLEET --out DIR` e2e tests (render*.e2e.test.ts):
 * a small fleet per test in a temp directory, laid out as `npm run demo` lays out examples/fleet:
 *
 *   repos/blueprints   git repository, package nginx, tags nginx/v1 and nginx/v2
 *                      (Porch's convention: revision N of package P is tag P/vN)
 *   fleet/             Repositories, WorkloadClusters, region endpoints, the nginx set
 *   out/               --out
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { parseValue } from '../../functions/krm/yaml/index.js'
import { git, writeTree } from './git-repo.js'
import { TestClock } from './clock.js'
import { createBlueprints, fleetFiles } from './fleet.js'
import type { FleetOptions } from './fleet.js'
import { runCli } from './cli-run.js'
import type { Run } from './cli-run.js'

export type { Run }
export const timeout = 30_000

// ---------------------------------------------------------------------------
// Running the command.

export interface VariantEntry {
  subject: string
  path?: string
  status: 'created' | 'updated' | 'unchanged' | 'deleted' | 'orphaned' | 'failed'
  upstream?: string
  previousUpstream?: string
  reasons: { code: string; message: string }[]
  warnings: string[]
  conflicts: unknown[]
  diff?: string
}

export interface JsonReport {
  apiVersion: string
  kind: string
  dryRun: boolean
  summary: Record<VariantEntry['status'], number>
  variants: VariantEntry[]
  problems: string[]
}

/** A test's directory: the blueprint repository, the fleet, the output. */
export class Workspace {
  readonly fleet: string
  readonly out: string
  readonly blueprints: string
  /** The time the renders run at. */
  readonly clock = new TestClock()

  constructor(readonly dir: string) {
    this.fleet = join(dir, 'fleet')
    this.out = join(dir, 'out')
    this.blueprints = join(dir, 'repos', 'blueprints')
  }

  static async create(options: FleetOptions): Promise<Workspace> {
    const ws = new Workspace(mkdtempSync(join(tmpdir(), 'kpt-variants-render-e2e-')))
    await createBlueprints(ws.blueprints)
    ws.writeFleet(options)
    return ws
  }

  /** Replaces the fleet directory's files. */
  writeFleet(options: FleetOptions): void {
    rmSync(this.fleet, { recursive: true, force: true })
    mkdirSync(this.fleet, { recursive: true })
    writeTree(this.fleet, fleetFiles(options))
  }

  /** `kpt-variants render <args>` in the workspace directory. */
  async render(...args: string[]): Promise<Run> {
    return runCli(this.dir, ['render', ...args], {
      // The record of earlier renders (run/memo.ts) stays in the workspace.
      env: { XDG_CACHE_HOME: join(this.dir, 'cache'), ...this.clock.env() },
      keepFinalNewline: true,
    })
  }

  /** `render fleet --out out <args>`, which must exit 0. */
  async renderOk(...args: string[]): Promise<Run> {
    const run = await this.render('fleet', '--out', 'out', ...args)
    if (run.exitCode !== 0)
      throw new Error(`render exited ${run.exitCode}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`)
    return run
  }

  /** `render fleet --out out --json <args>`: the exit code and the parsed report. */
  async renderJson(...args: string[]): Promise<{ run: Run; report: JsonReport }> {
    const run = await this.render('fleet', '--out', 'out', '--json', ...args)
    let report: JsonReport
    try {
      report = JSON.parse(run.stdout) as JsonReport
    } catch {
      throw new Error(`stdout is not JSON (exit ${run.exitCode})\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`)
    }
    return { run, report }
  }

  read(path: string): string {
    return readFileSync(join(this.out, path), 'utf8')
  }

  yaml<T = Record<string, any>>(path: string): T {
    return parseValue(this.read(path)) as T
  }

  async commitOf(tag: string): Promise<string> {
    return (await git(this.blueprints, 'rev-parse', `${tag}^{commit}`)).trim()
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** Every file and directory below `dir` (dot-entries included) with its bytes, inode and mtime. */
export function snapshot(dir: string): Record<string, { content: string; ino: number; mtimeMs: number }> {
  const out: Record<string, { content: string; ino: number; mtimeMs: number }> = {}
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = join(current, name)
      const stat = lstatSync(full)
      const rel = relative(dir, full).split(sep).join('/')
      if (stat.isDirectory()) {
        out[`${rel}/`] = { content: '', ino: stat.ino, mtimeMs: stat.mtimeMs }
        walk(full)
      } else out[rel] = { content: readFileSync(full).toString('base64'), ino: stat.ino, mtimeMs: stat.mtimeMs }
    }
  }
  walk(dir)
  return out
}

/** Sets the modification time of everything below `dir` (itself included) to `date`: a later write shows in mtimes whatever their granularity. */
export function backdate(dir: string, date = new Date('2001-01-01T00:00:00Z')): void {
  for (const path of Object.keys(snapshot(dir))) utimesSync(join(dir, path), date, date)
  utimesSync(dir, date, date)
}

/** A summary line of the human report: `STATUS  PACKAGE  VARIANT  UPSTREAM`. */
export function summaryRow(status: string, path: string, variant: string, upstream = ''): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^${esc(status)}\\s+${esc(path)}\\s+${esc(variant)}${upstream ? `\\s+${esc(upstream)}` : ''}$`, 'm')
}

export const paths = (report: JsonReport) => report.variants.map((v) => v.path)
export const entry = (report: JsonReport, path: string) => {
  const found = report.variants.filter((v) => v.path === path)
  if (found.length !== 1)
    throw new Error(
      `expected one report entry for ${path}, got ${found.length}:\n${JSON.stringify(report.variants, null, 2)}`,
    )
  return found[0]!
}

/** A workspace per call, removed after each test. */
export function useWorkspaces(): (options: FleetOptions) => Promise<Workspace> {
  const workspaces: Workspace[] = []
  afterEach(() => {
    for (const ws of workspaces.splice(0)) ws.remove()
  })
  return async (options) => {
    const ws = await Workspace.create(options)
    workspaces.push(ws)
    return ws
  }
}
