/**
 * The settings of the commands that only read what a render wrote (`status`,
 * `deps`): a render of the same fleet into the same output, which opens it
 * as that render would (`--out DIR`, else the downstream repositories'
 * published branches) and writes nothing.
 */
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { renderRecordFile } from '../cache/layout.js'
import type { RenderSettings } from '../run/settings.js'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'

/** `--out DIR` resolved against the working directory; a usage error when it is not a directory. */
export function existingOutDir(out: string | undefined, io: CliIO): string | undefined {
  const outDir = out === undefined ? undefined : resolve(io.cwd, out)
  if (outDir !== undefined && (!existsSync(outDir) || !statSync(outDir).isDirectory()))
    throw new UsageError(`--out ${out} is not a directory`)
  return outDir
}

/** What a reading command was given. */
export interface ReadSettingsOptions {
  fleetDir: string
  /** `--out DIR` (existingOutDir's); without it the output is the downstream repositories. */
  outDir: string | undefined
  cacheDir: string
  lockTimeoutMs: number
  namespace?: string | undefined
  io: CliIO
}

/** A dry run without diffs, exec or writes, of the fleet into the output as a render opens it. */
export function readSettings(options: ReadSettingsOptions): RenderSettings {
  const { fleetDir, outDir, cacheDir, lockTimeoutMs, namespace, io } = options
  return {
    fleetDir,
    outDir: outDir ?? fleetDir,
    dryRun: true,
    diff: false,
    onConflict: 'upstream',
    allowExec: false,
    ...(outDir === undefined
      ? { git: { cacheDir, lockTimeoutMs, publish: false } }
      : { memo: renderRecordFile(cacheDir, outDir) }),
    upstreamCache: { dir: cacheDir, lockTimeoutMs },
    cacheDir,
    ...(namespace ? { namespace } : {}),
    cwd: io.cwd,
    env: io.env,
  }
}
