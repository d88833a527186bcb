/**
 * `npm run images`: builds every image of the Dockerfile, one per function and
 * one for the orchestrator, tagged `kpt-variants/<name>:<version>`.
 *
 * The base is `--base IMAGE`, else the Dockerfile's default (node:22-slim)
 * when the engine has it or can pull it. Where no registry is reachable (a
 * sandbox, an air-gapped CI), the base is made here from this machine's Node
 * instead (see local-base.ts), and the orchestrator's from it plus git: the
 * images are then the same programs on the same Node major version.
 *
 *   npm run images                        # every image
 *   npm run images -- --only fan-out      # some of them
 *   npm run images -- --engine docker --base node:22-bookworm-slim
 */
import { resolve } from 'node:path'
import { Command } from 'commander'
import { execa } from 'execa'
import { hasImage, imageTargets, imageTag, installedEngine, packageVersion } from './image-names.js'
import { makeLocalBases } from './local-base.js'

const root = resolve(new URL('../..', import.meta.url).pathname)
const version = packageVersion(root)
const defaultBase = 'node:22-slim'

const options = new Command('images')
  .description('build the function and orchestrator images of the Dockerfile')
  .option('--engine <name>', 'podman or docker (default: $KPT_FN_RUNTIME, else whichever is installed, podman first)')
  .option(
    '--base <image>',
    `a Node 22 (or 20, 24) image with npm to build on (default: ${defaultBase}, or one made from this machine's Node when no registry is reachable)`,
  )
  .option('--local-base', "build on a base made from this machine's Node, without trying a registry")
  .option('--only <names>', `comma-separated images to build (default: all of ${imageTargets.join(', ')})`)
  .parse()
  .opts<{ engine?: string; base?: string; localBase?: boolean; only?: string }>()

const engine =
  options.engine ??
  installedEngine() ??
  fail('no container engine found: install podman (or docker), or set KPT_FN_RUNTIME')
const targets = options.only ? options.only.split(',').map((s) => s.trim()) : imageTargets
for (const target of targets)
  if (!imageTargets.includes(target)) fail(`unknown image "${target}": one of ${imageTargets.join(', ')}`)

const buildArgs: string[] = []
if (options.base) buildArgs.push('--build-arg', `BASE=${options.base}`)
else if (options.localBase || !(await hasOrPulls(defaultBase))) {
  if (!options.localBase)
    console.log(
      `${defaultBase} cannot be pulled (no registry reachable): building on a base made from this machine's Node ${process.version}`,
    )
  const bases = await makeLocalBases(engine)
  buildArgs.push('--build-arg', `BASE=${bases.node}`, '--build-arg', `GIT_BASE=${bases.git}`)
}

for (const target of targets) {
  const tag = imageTag(target, version)
  const started = performance.now()
  const build = await execa(engine, ['build', '--target', target, '--tag', tag, ...buildArgs, root], {
    reject: false,
    all: true,
  })
  if (build.exitCode !== 0) fail(`building ${tag} failed:\n${build.all}`)
  const size = await execa(engine, ['image', 'inspect', '--format', '{{.Size}}', tag])
  console.log(
    `${tag.padEnd(40)} ${(Number(size.stdout) / 2 ** 20).toFixed(0).padStart(5)} MiB  ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
}

async function hasOrPulls(image: string): Promise<boolean> {
  if (hasImage(engine, image)) return true
  return (await execa(engine, ['pull', image], { reject: false })).exitCode === 0
}

function fail(message: string): never {
  console.error(`images: ${message}`)
  process.exit(1)
}
