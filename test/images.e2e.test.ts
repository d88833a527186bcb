/**
 * The images through a real registry and the real kpt. `npm run images -- --registry HOST/PREFIX --push`
 * builds them, labelled, and pushes them to a registry on loopback (test/../scripts/registry.ts); they are
 * then removed from the engine, and kpt pulls each into a container storage of its own, empty: every
 * example, run with the functions' images (`image:` in the Kptfile, `kpt fn eval --image`) instead of
 * `exec:`, must give the same `.expected/` output, and the orchestrator's image must render the example
 * fleet as bin/kpt-variants does. Then the images are signed with cosign, their SBOMs attached, and
 * `cosign verify` must pass, and fail for another key and for an image pushed over a signed tag.
 *
 * Without a container engine the suite is skipped, saying so; without a registry program (Debian's
 * docker-registry) the images run from the engine's own storage, and without cosign the signing is
 * skipped, each saying so, except in CI (`CI` set), which installs all three and fails without them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { findCases, gitIdentity, repoRoot, runCase } from './e2e/runner.js'
import type { ImageRuntime } from './e2e/runner.js'
import { git, readTreeWithModes } from './support/git-repo.js'
import { registryImage, registryTags } from './support/registry-api.js'
import { createDemoFleet } from '../scripts/demo-fleet.js'
import { imageSbom } from '../scripts/image-build.js'
import type { PushedImage } from '../scripts/image-build.js'
import { imageName, imageTag, imageTargets, installedEngine, packageVersion } from '../scripts/image-names.js'
import { registryBinary, startLocalRegistry } from '../scripts/registry.js'
import type { LocalRegistry } from '../scripts/registry.js'
import { attestSbom, findCosign, generateKeyPair, signImage, verifyImage, verifySbom } from '../scripts/signing.js'
import type { Signer } from '../scripts/signing.js'
import { runCli } from './support/cli-run.js'
import { describeIfAvailable, testIfAvailable } from './support/requires.js'

const engine = installedEngine() ?? ''
const version = packageVersion(repoRoot)
const withRegistry = registryBinary() !== undefined
const cosign = findCosign(repoRoot)

/**
 * `kpt fn render` gives a container neither environment variables nor host
 * files, so a render example that reads in-cluster objects from a host
 * directory (KPT_VARIANTS_SOURCES) cannot run as an image; eval examples pass
 * them with --env and --mount.
 */
const cases = findCases().filter((c) => !c.config.skip && (c.config.testType === 'eval' || !c.config.env))

let registry: LocalRegistry | undefined
let images: ImageRuntime
let pushed: PushedImage[] = []
let prefix = ''

describeIfAvailable(
  engine !== '',
  'the image tests need a container engine (podman or docker): `apt-get install -y podman runc`',
)('function and orchestrator images', () => {
  beforeAll(async () => {
    const script = join(repoRoot, 'dist', 'scripts', 'images.js')
    if (!withRegistry) {
      // Unpushed: onlyWithRegistry has said so (and failed in CI).
      await execa('node', [script, '--engine', engine], { cwd: repoRoot })
      images = { engine, tag: (fn) => imageTag(fn, version) }
      return
    }
    registry = await startLocalRegistry({ storage: true, engine })
    prefix = `${registry.host}/kpt-variants`
    const digests = join(mkdtempSync(join(tmpdir(), 'kpt-variants-digests-')), 'digests.json')
    // The engine that builds and pushes keeps its own storage; only the registries.conf is shared.
    const push = { ...process.env, CONTAINERS_REGISTRIES_CONF: registry.env['CONTAINERS_REGISTRIES_CONF']! }
    await execa('node', [script, '--engine', engine, '--registry', prefix, '--push', '--digests', digests], {
      cwd: repoRoot,
      env: push,
    })
    pushed = JSON.parse(readFileSync(digests, 'utf8')) as PushedImage[]
    rmSync(join(digests, '..'), { recursive: true, force: true })
    // Gone from the engine: what runs from here on is pulled from the registry.
    for (const target of imageTargets) await execa(engine, ['rmi', imageTag(target, version, prefix)], { env: push })
    images = { engine, tag: (fn) => imageTag(fn, version, prefix), env: registry.env }
  }, 900_000)

  afterAll(async () => {
    await registry?.stop()
  }, 120_000)

  describe('images in a registry', () => {
    const onlyWithRegistry = testIfAvailable(
      withRegistry,
      'images: no registry program (apt-get install docker-registry): the images run from the engine, unpushed',
    )

    onlyWithRegistry(
      'each is in the registry under vX.Y.Z, vX.Y and vX, one digest, with the OCI labels, and not in the engine until pulled',
      async () => {
        expect(pushed.map((p) => p.target)).toEqual(imageTargets)
        const revision = (await execa('git', ['rev-parse', 'HEAD'], { cwd: repoRoot })).stdout.trim()
        for (const { target, tags, digests } of pushed) {
          const name = imageName(target, 'kpt-variants')
          const [major, minor] = version.split('.')
          expect((await registryTags(registry!.host, name)).sort()).toEqual(
            expect.arrayContaining([`v${version}`, `v${major}.${minor}`, `v${major}`]),
          )
          const image = await registryImage(registry!.host, name, `v${version}`)
          expect(new Set(Object.values(digests))).toEqual(new Set([image.digest]))
          expect(tags).toHaveLength(3)
          expect(image.labels).toMatchObject({
            'org.opencontainers.image.source': 'https://github.com/kpt-variants/kpt-variants',
            'org.opencontainers.image.version': version,
            'org.opencontainers.image.licenses': 'Apache-2.0',
            'org.opencontainers.image.title': target,
          })
          expect(image.labels['org.opencontainers.image.revision']).toMatch(new RegExp(`^${revision}(-dirty)?$`))
          expect(image.labels['org.opencontainers.image.description']).toMatch(/\w{10}/)
          const local = await execa(engine, ['image', 'exists', imageTag(target, version, prefix)], {
            env: { ...process.env, ...registry!.env },
            reject: false,
          })
          expect(local.exitCode).not.toBe(0)
        }
      },
    )
  })

  describe('function images through kpt', () => {
    test.each(cases.map((c) => [c.name, c] as const))(
      '%s',
      async (_name, testCase) => {
        await runCase(testCase, images)
      },
      300_000,
    )
  })

  test("the orchestrator's image renders the example fleet as bin/kpt-variants does, and proposes drafts with git, as nobody", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpt-variants-image-'))
    try {
      await createDemoFleet(dir)
      const local = await runCli(dir, ['render', 'fleet', '--out', 'local', '--cache', 'cache-local'])
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
            ...Object.entries(gitIdentity).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
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
          { reject: false, env: { ...process.env, ...images.env } },
        )
      const out = await container('fleet', '--out', 'image')
      expect(out.stderr).toContain('12 variant(s): 12 created')
      expect(out.exitCode).toBe(0)
      expect(readTreeWithModes(join(dir, 'image'))).toEqual(readTreeWithModes(join(dir, 'local')))
      const drafts = await container('fleet', '--git')
      expect(drafts.exitCode).toBe(0)
      expect(
        await git(join(dir, 'repos', 'edge-02.git'), '-c', 'safe.directory=*', 'branch', '--list', 'drafts/*'),
      ).toContain('drafts/nginx/packagevariant-1')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)

  test.each(['package-context', 'kpt-variants'])(
    'the %s image runs its program from the code cache its build made (bin/load-bundle.js), as nobody',
    async (name) => {
      const load = `import('/app/bin/load-bundle.js').then((m) => console.log(m.loadBundle(${JSON.stringify(name)}).codeCache))`
      const run = await execa(
        images.engine,
        [
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
        ],
        { env: { ...process.env, ...images.env } },
      )
      expect(String(run.stdout).trim()).toBe('used')
    },
    120_000,
  )

  describeIfAvailable(
    withRegistry && cosign !== undefined,
    `signing: ${withRegistry ? 'cosign is not built (bash scripts/build-cosign.sh)' : 'no registry'}`,
  )('signed images with their SBOMs (cosign)', () => {
    let signer: Signer
    let work: string
    const reference = (p: PushedImage) => {
      const tag = p.tags[0]!
      return `${tag.slice(0, tag.lastIndexOf(':'))}@${p.digests[tag]}`
    }

    beforeAll(async () => {
      if (!cosign) throw new Error('cosign is not built: bash scripts/build-cosign.sh')
      work = mkdtempSync(join(tmpdir(), 'kpt-variants-signing-'))
      const keys = await generateKeyPair(cosign, work, 'test')
      signer = { cosign, ...keys, offline: true, work, env: { COSIGN_PASSWORD: 'test' } }
      for (const image of pushed) {
        await signImage(signer, reference(image))
        const sbom = join(work, `${image.target}.cdx.json`)
        writeFileSync(sbom, await imageSbom(engine, image.tags[0]!, registry!.env))
        await attestSbom(signer, reference(image), sbom)
      }
    }, 300_000)
    afterAll(() => rmSync(work, { recursive: true, force: true }))

    test('cosign verify passes for every tag of every image, and the attested SBOM lists what the image has', async () => {
      for (const image of pushed) {
        for (const tag of image.tags) await verifyImage(signer, tag)
        const sbom = (await verifySbom(signer, image.tags[0]!)) as {
          metadata: { component: { name: string } }
          components: { name: string; type: string }[]
        }
        expect(sbom.metadata.component.name).toBe(imageName(image.target, prefix))
        const names = sbom.components.map((c) => c.name)
        expect(names).toEqual(expect.arrayContaining(['yaml', '@bufbuild/cel', 'node']))
        // The function images leave out the Kubernetes client; the orchestrator's has it.
        expect(names.includes('@kubernetes/client-node')).toBe(image.target === 'kpt-variants')
      }
    }, 120_000)

    test('cosign verify fails with another key', async () => {
      const other = await generateKeyPair(cosign!, join(work, 'other'), 'other')
      await expect(verifyImage({ ...signer, publicKey: other.publicKey }, pushed[0]!.tags[0]!)).rejects.toThrow(
        /no matching signatures|signature/i,
      )
    }, 60_000)

    test('cosign verify fails for a different image pushed to a signed tag', async () => {
      const target = pushed.find((p) => p.target === 'package-context')!
      const tag = target.tags[0]!
      const env = { ...process.env, ...registry!.env }
      // Another of our own images, built by the same build: only its signature can tell it apart.
      const other = imageTag('pipeline-prepend', version, prefix)
      await execa(engine, ['pull', other], { env })
      await execa(engine, ['tag', other, tag], { env })
      await execa(engine, ['push', tag], { env })
      expect((await registryImage(registry!.host, 'kpt-variants/package-context', `v${version}`)).digest).not.toBe(
        target.digests[tag],
      )
      await expect(verifyImage(signer, tag)).rejects.toThrow(/no signatures found/)
      await expect(verifySbom(signer, tag)).rejects.toThrow(/no matching attestations/)
      // The signed digest still verifies: a signature follows the image, never the tag.
      await verifyImage(signer, reference(target))
    }, 120_000)
  })
})
