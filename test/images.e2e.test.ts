/**
 * The function images through the real kpt: every example, run with the
 * functions' images (`image:` in the Kptfile, `kpt fn eval --image`) instead
 * of `exec:`, must give the same `.expected/` output. The images are built
 * first by `npm run images`' script, on this machine's Node where no registry
 * is reachable. Without a container engine the suite is skipped, saying so;
 * CI installs podman and runc so it always runs.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { execa, execaSync } from 'execa'
import { findCases, repoRoot, runCase } from './e2e/runner.js'
import type { ImageRuntime } from './e2e/runner.js'
import { imageTag } from '../scripts/image-names.js'

const engine = ['podman', 'docker'].find((name) => execaSync(name, ['--version'], { reject: false }).exitCode === 0)
const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version
const images: ImageRuntime | undefined = engine ? { engine, tag: (fn) => imageTag(fn, version) } : undefined

/**
 * `kpt fn render` gives a container neither environment variables nor host
 * files, so a render example that reads in-cluster objects from a host
 * directory (KPT_VARIANTS_SOURCES) cannot run as an image; eval examples pass
 * them with --env and --mount.
 */
const cases = findCases().filter((c) => !c.config.skip && (c.config.testType === 'eval' || !c.config.env))

if (!images) {
  test.skip('function images: no container engine (podman or docker) is installed; `apt-get install -y podman runc` runs these tests', () => {})
} else {
  describe('function images through kpt', () => {
    beforeAll(async () => {
      await execa('node', [join(repoRoot, 'dist', 'scripts', 'images.js'), '--engine', images.engine], { cwd: repoRoot })
    }, 600_000)

    test.each(cases.map((c) => [c.name, c] as const))(
      '%s',
      async (_name, testCase) => {
        await runCase(testCase, images)
      },
      120_000,
    )
  })
}
