/**
 * `npm run images`: builds every image of the Dockerfile, one per function and one for the
 * orchestrator, tagged `<registry>/<name>:v<version>` (ghcr.io/kpt-variants unless --registry says
 * otherwise) with the OCI labels; `--push` pushes each under every tag a release gives it.
 *
 * The base is `--base IMAGE`, else the Dockerfile's default (node:22-slim) when the engine has it or
 * can pull it. Where no registry is reachable (a sandbox, an air-gapped CI), the base is made here
 * from this machine's Node instead (see local-base.ts), and the orchestrator's from it plus git: the
 * images are then the same programs on the same Node major version.
 *
 *   npm run images                        # every image
 *   npm run images -- --only fan-out      # some of them
 *   npm run images -- --registry registry.example.com/kpt-variants --push
 *   npm run images -- --engine docker --base node:22-bookworm-slim
 */
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Command } from 'commander'
import { baseBuildArgs, buildImage, defaultBase, pushImage, sourceRevision } from './image-build.js'
import type { PushedImage } from './image-build.js'
import { defaultRegistry, imageTargets, installedEngine, packageVersion } from './image-names.js'

const root = resolve(new URL('../..', import.meta.url).pathname)
const version = packageVersion(root)

const options = new Command('images')
  .description('build the function and orchestrator images of the Dockerfile, and push them')
  .option('--engine <name>', 'podman or docker (default: $KPT_FN_RUNTIME, else whichever is installed, podman first)')
  .option(
    '--base <image>',
    `a Node 22 (or 24) image with npm to build on (default: ${defaultBase}, or one made from this machine's Node when no registry is reachable)`,
  )
  .option('--local-base', "build on a base made from this machine's Node, without trying a registry")
  .option('--only <names>', `comma-separated images to build (default: all of ${imageTargets.join(', ')})`)
  .option('--registry <host/prefix>', 'name the images <host/prefix>/<name>:v<version>', defaultRegistry)
  .option(
    '--push',
    'push each image as vX.Y.Z, vX.Y and vX (a registry served over plain HTTP must be marked insecure in registries.conf)',
  )
  .option('--digests <file>', 'with --push, write the tags and digests pushed to FILE as JSON (what gets signed)')
  .parse()
  .opts<{
    engine?: string
    base?: string
    localBase?: boolean
    only?: string
    registry: string
    push?: boolean
    digests?: string
  }>()

const engine =
  options.engine ??
  installedEngine() ??
  fail('no container engine found: install podman (or docker), or set KPT_FN_RUNTIME')
const targets = options.only ? options.only.split(',').map((s) => s.trim()) : imageTargets
for (const target of targets)
  if (!imageTargets.includes(target)) fail(`unknown image "${target}": one of ${imageTargets.join(', ')}`)
if (options.digests && !options.push) fail('--digests needs --push')

const buildArgs = await baseBuildArgs(engine, { ...options, log: (line) => console.log(line) })
const revision = await sourceRevision(root)
const pushed: PushedImage[] = []
for (const target of targets) {
  const image = await buildImage(engine, root, target, {
    version,
    registry: options.registry,
    revision,
    buildArgs,
  }).catch((err: Error) => fail(err.message))
  console.log(
    `${image.tag.padEnd(50)} ${(image.size / 2 ** 20).toFixed(0).padStart(5)} MiB  ${image.seconds.toFixed(1)} s`,
  )
  if (options.push) {
    const push = await pushImage(engine, target, { version, registry: options.registry }).catch((err: Error) =>
      fail(err.message),
    )
    for (const tag of push.tags) console.log(`  pushed ${tag}@${push.digests[tag]}`)
    pushed.push(push)
  }
}
if (options.digests) writeFileSync(options.digests, `${JSON.stringify(pushed, null, 2)}\n`)

function fail(message: string): never {
  console.error(`images: ${message}`)
  process.exit(1)
}
