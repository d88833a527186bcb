/**
 * Rendering on several threads gives what one thread gives, byte for byte:
 * the files, their modes and the report. Two fleet sizes, because a big
 * fleet's workers start before the main thread has planned and a smaller
 * one's after (render.ts); both must share the variants the same way.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFleet } from '../bench/fleet-fixture.js'
import { treeWithModesAndBytes } from './support/files.js'
import { runCliOk } from './support/cli-run.js'

const timeout = 120_000

let dir: string
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe.each([
  // ~58 KiB of fleet YAML: workers start after planning.
  [130, 'after planning'],
  // ~90 KiB: workers start at once, beside the main thread's planning.
  [200, 'at once'],
])('%i variants (workers start %s)', (variants) => {
  test(
    'two threads write the same files and the same report as one',
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'kpt-variants-threads-'))
      await createFleet(dir, { variants, resources: 8 })
      const render = async (threads: number) => {
        const run = await runCliOk(
          dir,
          ['render', 'fleet', '--out', `out-${threads}`, '--threads', String(threads), '--json', '--no-progress'],
          { env: { XDG_CACHE_HOME: join(dir, 'cache') } },
        )
        return JSON.parse(run.stdout) as { summary: Record<string, number> }
      }
      const [one, two] = [await render(1), await render(2)]
      expect(one.summary.created).toBe(variants)
      expect(two).toEqual(one)
      expect(treeWithModesAndBytes(join(dir, 'out-2'))).toEqual(treeWithModesAndBytes(join(dir, 'out-1')))
    },
    timeout,
  )
})
