/**
 * The process boundary of every `bin/<name>`: argv, stdin, `--sources` files,
 * stdout and the exit code. The only module of the SDK that does I/O.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseArgs } from 'node:util'
import type { KubeObject } from './kube-object.js'
import { parseObjects } from './objects.js'
import { ResourceList } from './resource-list.js'
import type { Result } from './results.js'
import { newResult } from './results.js'
import { runFunction } from './run.js'
import type { KrmFunction } from './run.js'

/** Environment variable with extra `--sources` paths, joined by `:`. */
export const sourcesEnv = 'KPT_VARIANTS_SOURCES'

/** The streams a run uses; tests pass their own. */
export interface MainIO {
  readStdin(): Promise<Buffer>
  stdinIsTTY: boolean
  stdout(text: string): void
  stderr(text: string): void
  env: Readonly<Record<string, string | undefined>>
}

const processIO: MainIO = {
  async readStdin() {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
  },
  stdinIsTTY: Boolean(process.stdin.isTTY),
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
}

/** Runs a function as a program; resolves to the exit code. */
export async function runMain(fn: KrmFunction, argv: readonly string[], io: MainIO = processIO): Promise<number> {
  let args: { help?: boolean; sources?: string[] }
  try {
    args = parseArgs({
      args: [...argv],
      options: { help: { type: 'boolean', short: 'h' }, sources: { type: 'string', multiple: true } },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (err) {
    const message = `${fn.name}: ${(err as Error).message} (see --help)`
    return fail(io, message)
  }
  if (args.help) {
    io.stdout(helpText(fn))
    return 0
  }
  if (io.stdinIsTTY) {
    io.stderr(`${fn.name}: expects a ResourceList on stdin; run it with kpt fn render / kpt fn eval, or see --help\n`)
    return 1
  }
  const decoded = decodeInput(await io.readStdin())
  if (!decoded.ok) return fail(io, `${fn.name}: ${decoded.error}`)
  const paths = [...(args.sources ?? []), ...(io.env[sourcesEnv] ?? '').split(':').filter(Boolean)]
  const { objects, results } = loadSources(paths)
  const run = runFunction(fn, decoded.text, { sources: objects, sourceResults: results })
  io.stdout(run.output)
  for (const line of run.stderr) io.stderr(`${line}\n`)
  return run.exitCode
}

function fail(io: MainIO, message: string): number {
  const rl = ResourceList.empty()
  rl.results.error(message)
  io.stdout(rl.toString())
  io.stderr(`${message}\n`)
  return 1
}

/** Rejects what the YAML parser would accept silently: invalid UTF-8 and NUL bytes. */
export function decodeInput(bytes: Buffer): { ok: true; text: string } | { ok: false; error: string } {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return { ok: false, error: 'input is not valid UTF-8' }
  }
  const nul = text.indexOf('\0')
  if (nul >= 0) return { ok: false, error: `input contains a NUL character at offset ${nul}` }
  return { ok: true, text }
}

/**
 * Reads `--sources` paths: files, or directories walked in sorted order for
 * `*.yaml`, `*.yml` and `*.json` (dot-entries skipped). A path that cannot be
 * read or parsed becomes an error result naming the file.
 */
export function loadSources(paths: readonly string[]): { objects: KubeObject[]; results: Result[] } {
  const objects: KubeObject[] = []
  const results: Result[] = []
  for (const path of paths) {
    let files: string[]
    try {
      files = statSync(path).isDirectory() ? listYamlFiles(path).map((f) => join(path, f)) : [path]
    } catch (err) {
      results.push(
        newResult(
          'error',
          `cannot read --sources ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        ),
      )
      continue
    }
    for (const file of files) {
      try {
        objects.push(...parseObjects(readFileSync(file, 'utf8'), file))
      } catch (err) {
        results.push(newResult('error', `invalid --sources file: ${(err as Error).message}`, { file: { path: file } }))
      }
    }
  }
  return { objects, results }
}

/** The `*.yaml`, `*.yml` and `*.json` files below `dir`, relative to `root`, in sorted order; dot-entries skipped. */
export function listYamlFiles(dir: string, root = dir): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith('.')) continue
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...listYamlFiles(full, root))
    else if (/\.(ya?ml|json)$/.test(entry.name)) out.push(relative(root, full))
  }
  return out
}

function helpText(fn: KrmFunction): string {
  return `${fn.name}: ${fn.description}

Usage:
  kpt fn render PKG --allow-exec          (with "exec: ${fn.name}" in the Kptfile pipeline)
  kpt fn eval PKG --exec ${fn.name} --fn-config CONFIG.yaml
  ${fn.name} [--sources PATH]... < resource-list.yaml

Options:
  --sources PATH   read-only objects (file or directory of YAML) the function may
                   read but never emits; repeatable. Also $${sourcesEnv} (paths joined by ':').
  -h, --help       print this help

${fn.usage.trim()}
`
}
