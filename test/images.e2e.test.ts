/**
 * The function images through the real kpt: every example, run with the
 * functions' images (`image:` in the Kptfile, `kpt fn eval --image`) instead
 * of `exec:`, must give the same `.expected/` output. The images are built
 * first by `npm run images`' script, on this machine's Node where no registry
 * is reachable. Without a container engine the suite is skipped, saying so;
 * CI installs podman and runc so it always runs.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { findCases, gitIdentity, repoRoot, runCase } from './e2e/runner.js'
import type { ImageRuntime } from './e2e/runner.js'
import { createBlueprints, fleetFiles, threeClusters } from './support/fleet.js'
import { git, readTreeWithModes, writeTree } from './support/git-repo.js'
import { imageTag, installedEngine, packageVersion } from '../scripts/image-names.js'

const engine = installedEngine()
const version = packageVersion(repoRoot)
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
      await execa('node', [join(repoRoot, 'dist', 'scripts', 'images.js'), '--engine', images.engine], {
        cwd: repoRoot,
      })
    }, 600_000)

    test.each(cases.map((c) => [c.name, c] as const))(
      '%s',
      async (_name, testCase) => {
        await runCase(testCase, images)
      },
      120_000,
    )

    test("the orchestrator's image renders a fleet as bin/kpt-variants does, and proposes drafts with git, as nobody", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kpt-variants-image-'))
      try {
        await createBlueprints(join(dir, 'repos', 'blueprints'))
        writeTree(join(dir, 'fleet'), fleetFiles({ clusters: threeClusters }))
        for (const name of ['edge-01', 'edge-02', 'edge-03'])
          await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
        const local = await execa(
          'node',
          [join(repoRoot, 'bin', 'kpt-variants'), 'render', 'fleet', '--out', 'local', '--cache', 'cache-local'],
          {
            cwd: dir,
            env: { ...process.env, ...gitIdentity },
            reject: false,
          },
        )
        expect(local.exitCode).toBe(0)
        // The image runs as nobody, as in the cluster, so the repositories become nobody's (git refuses another user's
        // repository); where the tests cannot chown, the container runs as the tests' user instead.
        const asRoot = process.getuid?.() === 0
        if (asRoot) await execa('chown', ['-R', '65534:65534', dir])
        const user = asRoot ? [] : ['--user', `${process.getuid?.()}:${process.getgid?.()}`]
        const container = (...args: string[]) =>
          execa(
            images.engine,
            [
              'run',
              '--rm',
              '--network',
              'none',
              ...user,
              '-e',
              'HOME=/tmp',
              '-v',
              `${dir}:${dir}`,
              '-w',
              dir,
              images.tag('kpt-variants'),
              'render',
              ...args,
              '--cache',
              `${dir}/cache-image`,
            ],
            {
              reject: false,
            },
          )
        const out = await container('fleet', '--out', 'image')
        expect(out.stderr).toContain('3 variant(s): 3 created')
        expect(out.exitCode).toBe(0)
        expect(readTreeWithModes(join(dir, 'image'))).toEqual(readTreeWithModes(join(dir, 'local')))
        const drafts = await container('fleet', '--git')
        expect(drafts.exitCode).toBe(0)
        expect(
          (
            await git(join(dir, 'repos', 'edge-02.git'), '-c', 'safe.directory=*', 'branch', '--list', 'drafts/*')
          ).trim(),
        ).toBe('drafts/nginx/packagevariant-1')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)

    test.each(['package-context', 'kpt-variants'])(
      'the %s image runs its program from the code cache its build made (bin/load-bundle.js), as nobody',
      async (name) => {
        const load = `import('/app/bin/load-bundle.js').then((m) => console.log(m.loadBundle(${JSON.stringify(name)}).codeCache))`
        const run = await execa(images.engine, [
          'run',
          '--rm',
          '--network',
          'none',
          '--entrypoint',
          'node',
          images.tag(name),
          '--input-type=module',
          '-e',
          load,
        ])
        expect(String(run.stdout).trim()).toBe('used')
      },
      60_000,
    )
  })
}
