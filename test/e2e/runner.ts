/**
 * The kpt function catalog's e2e convention, run through the real `kpt`:
 * every `functions/<name>/examples/<case>/` with `.expected/config.yaml` is
 * copied to a temp dir, committed to a fresh git repo, run (render or eval)
 * `runCount` times (default 2, to prove idempotency), and every run's exit
 * code, stderr and `git diff` compared with `.expected/`, and its results: the
 * first run's, and every run's of a case that is expected to fail.
 * `KPT_E2E_UPDATE_EXPECTED=true` rewrites `diff.patch` and `results.yaml` from
 * the first run, and holds the later runs to them.
 *
 * With `images`, the same case runs the functions' container images instead:
 * the Kptfile's `exec: <fn>` becomes `image: <tag>` for the run and is put
 * back before the diff, `--exec` becomes `--image`, and results name the
 * function as `exec:` did, so the same `.expected/` holds for both.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { execa } from 'execa'
import { parseValue, printValue } from '../../functions/krm/yaml/index.js'
import { functionPrograms } from '../../scripts/programs.js'
import { repositoryRoot } from '../support/root.js'

/** `.expected/config.yaml`, the subset of kpt's e2e fields we support. */
export interface CaseConfig {
  testType?: 'render' | 'eval'
  exitCode?: number
  /** Substring that stderr of every run must contain. */
  stdErr?: string
  runCount?: number
  skip?: boolean
  /** eval: the executable (a name in bin/), plus its own arguments. */
  execPath?: string
  /** eval: `--fn-config` file, relative to the package. */
  fnConfig?: string
  /** eval: `-- key=value` arguments. */
  args?: Record<string, string>
  /** Extra environment, e.g. KPT_VARIANTS_SOURCES (relative paths resolve against the package copy). */
  env?: Record<string, string>
}

export interface E2eCase {
  name: string
  dir: string
  config: CaseConfig
}

/** The repository's root, from test/e2e/ or compiled under dist/ (the benchmarks import the test support). */
export const repoRoot = repositoryRoot()

/** The KRM functions' programs: every executable of bin/ but the orchestrator (bin/load-bundle.js is their loader). */
export function functionBins(): string[] {
  const bin = join(repoRoot, 'bin')
  return readdirSync(bin).filter((name) => name !== 'kpt-variants' && (statSync(join(bin, name)).mode & 0o111) !== 0)
}

/** Every file below `dir` (links followed): slash-separated paths relative to it, in sorted order. */
export function filesBelow(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix))
    .sort()
    .flatMap((name) => {
      const path = prefix === '' ? name : `${prefix}/${name}`
      return statSync(join(dir, path)).isDirectory() ? filesBelow(dir, path) : [path]
    })
}

/** A fixed git identity, so commits work on machines without git config. */
export const gitIdentity = {
  GIT_AUTHOR_NAME: 'e2e',
  GIT_AUTHOR_EMAIL: 'e2e@example.com',
  GIT_COMMITTER_NAME: 'e2e',
  GIT_COMMITTER_EMAIL: 'e2e@example.com',
}
const binDir = join(repoRoot, 'bin')
const update = process.env['KPT_E2E_UPDATE_EXPECTED'] === 'true'

/** Finds every example with an `.expected/config.yaml` under functions/. */
export function findCases(root = join(repoRoot, 'functions')): E2eCase[] {
  const cases: E2eCase[] = []
  for (const fn of readdirSync(root).sort()) {
    const examples = join(root, fn, 'examples')
    if (!existsSync(examples)) continue
    for (const example of readdirSync(examples).sort()) {
      const dir = join(examples, example)
      const configFile = join(dir, '.expected', 'config.yaml')
      if (!existsSync(configFile)) continue
      const config = (parseValue(readFileSync(configFile, 'utf8')) ?? {}) as CaseConfig
      cases.push({ name: `${fn}/${example}`, dir, config })
    }
  }
  return cases
}

/** What a case produced on one run. */
interface RunResult {
  exitCode: number
  stderr: string
  diff: string
  results: string | undefined
}

/** How the functions run as images: the engine kpt uses and each function's image. */
export interface ImageRuntime {
  engine: string
  tag(fn: string): string
  /** More of the environment kpt runs the engine in (a registries.conf, a storage of its own). */
  env?: Record<string, string>
}

/** Runs one case, its `exec:` functions found in `bin` (the repository's bin/ unless told); throws an Error describing the first mismatch. */
export async function runCase(testCase: E2eCase, images?: ImageRuntime, bin: string = binDir): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'kpt-variants-e2e-'))
  const pkg = join(work, 'pkg')
  try {
    cpSync(testCase.dir, pkg, { recursive: true })
    await git(pkg, 'init', '-q')
    await git(pkg, 'add', '-A')
    await git(pkg, 'commit', '-q', '-m', 'initial')
    const base = (await git(pkg, 'rev-parse', 'HEAD')).trim()
    const expectedDir = join(testCase.dir, '.expected')
    const runs = testCase.config.runCount ?? 2
    for (let i = 0; i < runs; i++) {
      const run = await runOnce(testCase.config, pkg, join(work, `results-${i}`), base, images, bin)
      const label = `${testCase.name} (run ${i + 1})`
      const wantExit = testCase.config.exitCode ?? 0
      if (run.exitCode !== wantExit) {
        throw new Error(`${label}: exit code ${run.exitCode}, expected ${wantExit}\n${run.stderr}`)
      }
      if (testCase.config.stdErr && !run.stderr.includes(testCase.config.stdErr)) {
        throw new Error(`${label}: stderr does not contain ${JSON.stringify(testCase.config.stdErr)}:\n${run.stderr}`)
      }
      compareFile(label, join(expectedDir, 'diff.patch'), run.diff, i === 0)
      // A failing case leaves the package as it was, so every run must report the same; a succeeding one reports
      // what it changed, which its second run (nothing left to change) does not repeat.
      const resultsChecked = i === 0 || wantExit !== 0
      if (resultsChecked && (existsSync(join(expectedDir, 'results.yaml')) || (update && i === 0 && run.results))) {
        if (images)
          compareFile(
            label,
            join(expectedDir, 'results.yaml'),
            asImageResults(run.results ?? ''),
            false,
            asImageResults,
          )
        else compareFile(label, join(expectedDir, 'results.yaml'), run.results ?? '', i === 0)
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

async function runOnce(
  config: CaseConfig,
  pkg: string,
  resultsDir: string,
  base: string,
  images: ImageRuntime | undefined,
  bin: string,
): Promise<RunResult> {
  const args =
    config.testType === 'eval'
      ? evalArgs(config, pkg, resultsDir, images)
      : ['fn', 'render', '.', '--allow-exec', '--results-dir', resultsDir]
  const env = {
    ...process.env,
    ...config.env,
    PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}`,
    ...(images ? { KPT_FN_RUNTIME: images.engine, ...images.env } : {}),
  }
  if (images && config.testType !== 'eval') swapKptfileFunctions(pkg, images, 'image')
  const run = await execa('kpt', args, { cwd: pkg, env, reject: false, stdin: 'ignore' })
  if (images && config.testType !== 'eval') swapKptfileFunctions(pkg, images, 'exec')
  await git(pkg, 'add', '-A')
  const diff = await git(pkg, 'diff', '--cached', base)
  const resultsFile = join(resultsDir, 'results.yaml')
  return {
    exitCode: run.exitCode ?? -1,
    stderr: String(run.stderr),
    diff,
    results: existsSync(resultsFile) ? normaliseResults(readFileSync(resultsFile, 'utf8'), images) : undefined,
  }
}

function evalArgs(config: CaseConfig, pkg: string, resultsDir: string, images: ImageRuntime | undefined): string[] {
  if (!config.execPath) throw new Error('an eval case needs `execPath` in .expected/config.yaml')
  const args = [
    'fn',
    'eval',
    '.',
    ...(images ? ['--image', images.tag(config.execPath)] : ['--exec', config.execPath]),
    '--results-dir',
    resultsDir,
  ]
  if (images) {
    // A container sees neither the environment nor the files of the host: each variable is passed, and a path it names mounted where it is.
    for (const [name, value] of Object.entries(config.env ?? {})) {
      const path = resolve(pkg, value)
      args.push('--env', `${name}=${existsSync(path) ? path : value}`)
      if (existsSync(path)) args.push('--mount', `type=bind,src=${path},dst=${path}`)
    }
  }
  if (config.fnConfig) args.push('--fn-config', config.fnConfig)
  const kv = Object.entries(config.args ?? {})
  if (kv.length > 0) args.push('--', ...kv.map(([k, v]) => `${k}=${v}`))
  return args
}

/** The Kptfile's functions as `exec: <fn>` (the example as written) or as `image: <tag>`. */
function swapKptfileFunctions(pkg: string, images: ImageRuntime, to: 'exec' | 'image'): void {
  const kptfile = join(pkg, 'Kptfile')
  if (!existsSync(kptfile)) return
  const text = readFileSync(kptfile, 'utf8')
  const swapped = text.replace(/\b(exec|image): ([\w./:-]+)$/gm, (line, field: string, name: string) => {
    if (to === 'image' && field === 'exec') return `image: ${images.tag(name)}`
    if (to === 'exec' && field === 'image') return `exec: ${execName(name, images) ?? name}`
    return line
  })
  if (swapped !== text) writeFileSync(kptfile, swapped)
}

/** The function whose image `tag` is, if it is one of ours. */
function execName(tag: string, images: ImageRuntime): string | undefined {
  return functionPrograms.find(({ name }) => images.tag(name) === tag.replace(/^localhost\//, ''))?.name
}

/** kpt prints stderr of functions with absolute temp paths, and names an image function by its image; keep results stable. */
function normaliseResults(text: string, images: ImageRuntime | undefined): string {
  const stable = text.replace(/\/tmp\/kpt-variants-e2e-[^/\s]+\/pkg/g, '<pkg>')
  if (!images) return stable
  return stable.replace(/^(\s*-? ?)image: (\S+)$/gm, (line, indent: string, tag: string) => {
    const fn = execName(tag, images)
    return fn ? `${indent}exec: ${fn}` : line
  })
}

/**
 * Results as an image run reports them: kpt trims a container's stderr, and
 * a source file mounted at its host path is named by that path. Applied to
 * both sides, so the same `.expected/` holds for `exec:` and `image:`.
 */
function asImageResults(text: string): string {
  const list = parseValue(text.replace(/<pkg>\//g, '')) as { items?: { stderr?: unknown }[] } | null
  for (const item of list?.items ?? []) if (typeof item.stderr === 'string') item.stderr = item.stderr.trimEnd()
  return printValue(list, { wide: true })
}

function compareFile(
  label: string,
  file: string,
  actual: string,
  mayUpdate: boolean,
  normalise = (text: string) => text,
): void {
  if (update && mayUpdate) {
    writeFileSync(file, actual)
    return
  }
  const expected = existsSync(file) ? normalise(readFileSync(file, 'utf8')) : ''
  if (expected !== actual) {
    throw new Error(
      `${label}: ${file.slice(repoRoot.length + 1)} differs.\n--- expected\n${expected}\n--- actual\n${actual}`,
    )
  }
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const run = await execa('git', args, {
    cwd,
    env: gitIdentity,
  })
  return String(run.stdout) + (String(run.stdout) ? '\n' : '')
}
