/**
 * Rendering a package with the real `kpt fn render`, for pipelines with
 * functions that are not ours (`exec:` programs, `image:` containers where a
 * container engine exists): the package is written to a scratch directory,
 * rendered there, and read back. Our own functions stay available to kpt by
 * name (`bin/` first on PATH), with the fleet as their `--sources`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import type { Result } from '../../functions/krm/index.js'
import { parseValue } from '../../functions/krm/yaml/index.js'
import { readPackageDirectory } from '../package/directory.js'
import type { PackageFiles } from '../package/files.js'
import type { Rendered } from './in-process.js'

/** What a kpt render needs. */
export interface KptRender {
  /** A scratch directory (removed by the caller). */
  scratch: string
  /** `--allow-exec`: let kpt run `exec:` functions. */
  allowExec: boolean
  /** `--image-functions skip`: never run a pipeline with `image:` functions other than ours (no container engine). */
  skipImages?: boolean
  /** The fleet directory, given to our functions as `KPT_VARIANTS_SOURCES`. */
  sources: string
  /** The directory kpt runs in: relative `exec:` paths resolve against it, as with kpt itself. */
  cwd: string
  env: Readonly<Record<string, string | undefined>>
}

/** The directory of our `bin/` programs: the nearest `bin/` above this module (it runs from `dist/` or from source). */
export const binDir = findBinDir(dirname(fileURLToPath(import.meta.url)))

function findBinDir(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'bin', 'kpt-variants'))) return join(dir, 'bin')
  }
  return join(from, 'bin')
}

/** Renders `files` (named `name`) with `kpt fn render`; a failure carries kpt's results and its last lines of output. */
export async function renderWithKpt(files: PackageFiles, name: string, options: KptRender): Promise<Rendered> {
  const work = mkdtempSync(join(options.scratch, 'render-'))
  try {
    const pkg = join(work, name)
    writePackage(pkg, files)
    const resultsDir = join(work, '.results')
    const args = ['fn', 'render', pkg, '--results-dir', resultsDir, '--truncate-output=false']
    if (options.allowExec) args.push('--allow-exec')
    const run = await execa('kpt', args, {
      cwd: options.cwd,
      reject: false,
      stdin: 'ignore',
      env: {
        ...options.env,
        PATH: `${binDir}${delimiter}${options.env['PATH'] ?? ''}`,
        KPT_VARIANTS_SOURCES: options.sources,
      },
    })
    const results = readResults(join(resultsDir, 'results.yaml'))
    if (run.exitCode !== 0) return kptFailed(String(run.stderr), run.exitCode, results)
    return { ok: true, files: readPackageDirectory(pkg)!, results }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return {
        ok: false,
        results: [
          {
            severity: 'error',
            message: 'kpt fn render: kpt is not installed (needed for pipelines with functions other than ours)',
          },
        ],
      }
    throw err
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** Writes the package's files into directory `pkg`, executables as such. */
function writePackage(pkg: string, files: PackageFiles): void {
  for (const [path, file] of files) {
    const full = join(pkg, ...path.split('/'))
    mkdirSync(dirname(full), { recursive: true })
    writeFileSync(full, file.content, { mode: file.executable ? 0o755 : 0o644 })
  }
}

/** A failed render: the functions' errors, and kpt's own words, where no container engine is the one a user can fix. */
function kptFailed(stderr: string, exitCode: number | undefined, results: Result[]): Rendered {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('[RUNNING]'))
  const engine = lines.find((l) =>
    /docker must be running|cannot connect to the (docker|podman)|executable file not found in \$PATH/i.test(l),
  )
  if (engine) {
    const failed =
      lines.find((l) => l.startsWith('[FAIL]'))?.replace(/^\[FAIL\] ("[^"]*").*$/, '$1') ?? 'an image function'
    const message = `${failed} cannot run: no container engine (kpt: "${engine}"); install one (KPT_FN_RUNTIME=podman for podman), or render with --image-functions skip to write the package with its pipeline not yet run`
    return {
      ok: false,
      results: [...results.filter((r) => r.severity === 'error'), { severity: 'error', message }],
    }
  }
  const error =
    lines.filter((l) => l.startsWith('Error:') || l.startsWith('[FAIL]')).join('; ') || lines.slice(-3).join('; ')
  return {
    ok: false,
    results: [
      ...results.filter((r) => r.severity === 'error'),
      { severity: 'error', message: `kpt fn render: ${error || `exit code ${exitCode}`}` },
    ],
  }
}

/** The results of kpt's `results.yaml` (a FunctionResultList), flattened. */
function readResults(path: string): Result[] {
  let list: { items?: { image?: string; exec?: string; results?: Result[] }[] } | undefined
  try {
    list = parseValue(readFileSync(path, 'utf8')) as typeof list
  } catch {
    return []
  }
  const out: Result[] = []
  for (const item of list?.items ?? []) {
    const fn = item.image ?? item.exec ?? 'function'
    for (const r of item.results ?? [])
      out.push({ ...r, message: `${fn}: ${r.message}`, severity: r.severity ?? 'error' })
  }
  return out
}
