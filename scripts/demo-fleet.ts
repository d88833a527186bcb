/**
 * The example fleet laid out as `npm run demo` lays it out in `demo/` (and the reports' and status
 * tests in a temporary directory): what `kpt-variants demo DIR` does (orchestrator/commands/demo.ts),
 * into a directory emptied first.
 */
import { existsSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDemoFleet as layOutDemoFleet } from '../orchestrator/commands/demo.js'

/** The repository's root: above this module, run from dist/scripts/ or from scripts/ (the tests). */
export const repoRoot = findRoot(dirname(fileURLToPath(import.meta.url)))

function findRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(join(dir, 'examples', 'fleet'))) return dir
  throw new Error(`examples/fleet not found above ${from}`)
}

/** Lays the demo out in `dir` (emptied first). */
export async function createDemoFleet(dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true })
  await layOutDemoFleet(dir)
}
