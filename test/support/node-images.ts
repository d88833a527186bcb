/**
 * The images a test node runs, from the local container engine into the node's containerd (no
 * registry is reached): the orchestrator's image as `npm run images` builds it, and the pod
 * sandbox's image. Kubernetes' own pause image is a registry download; its job (hold the pod's
 * namespaces, do nothing, end on SIGTERM) is done here by this machine's Node on the same local
 * base the project's images are built on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { imageTag, packageVersion } from '../../scripts/image-names.js'
import { makeLocalBases } from '../../scripts/local-base.js'
import { pauseImage } from './node-cluster.js'
import type { NodeCluster } from './node-cluster.js'
import { repositoryRoot } from './root.js'

const registry = 'localhost/kpt-variants'

/** The orchestrator's image as the node's pods name it. */
export const orchestratorImage = imageTag('kpt-variants', packageVersion(repositoryRoot()), registry)

const pauseProgram =
  "process.on('SIGTERM', () => process.exit(0)); process.on('SIGINT', () => process.exit(0)); setInterval(() => {}, 2 ** 30)"

/** Builds the orchestrator's image (the engine's layer cache makes an unchanged one quick) and the pause image. */
export async function buildNodeImages(engine: string): Promise<void> {
  const root = repositoryRoot()
  await execa(
    'node',
    [
      join(root, 'dist', 'scripts', 'images.js'),
      '--engine',
      engine,
      '--local-base',
      '--only',
      'kpt-variants',
      '--registry',
      registry,
    ],
    { cwd: root },
  )
  const bases = await makeLocalBases(engine)
  const context = mkdtempSync(join(tmpdir(), 'kpt-variants-pause-'))
  try {
    writeFileSync(
      join(context, 'Containerfile'),
      `FROM ${bases.node}\nUSER 65535:65535\nENTRYPOINT ["/usr/local/bin/node", "-e", ${JSON.stringify(pauseProgram)}]\n`,
    )
    await execa(engine, ['build', '--quiet', '--tag', pauseImage, context])
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
}

/** Saves each image from the engine and imports it into the node's containerd. */
export async function importImages(engine: string, cluster: NodeCluster, images: string[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kpt-variants-images-'))
  try {
    for (const [i, image] of images.entries()) {
      const archive = join(dir, `${i}.tar`)
      await execa(engine, ['save', '--format', 'docker-archive', '--output', archive, image])
      await cluster.ctr(['images', 'import', archive])
      rmSync(archive)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
