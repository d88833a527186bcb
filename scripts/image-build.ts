/**
 * Building, labelling, pushing and describing the images of the Dockerfile: what `npm run images`
 * (scripts/images.ts) and `npm run release` (scripts/release.ts) do, and the image tests check.
 *
 * Each image is tagged `<registry>/<target>:v<version>` and labelled with the OCI annotations
 * (https://github.com/opencontainers/image-spec/blob/main/annotations.md): where its source is, its
 * version and git revision, its licence, what it does. Pushed, it gets every tag a release gives it
 * (vX.Y.Z, vX.Y, vX as the kpt function catalog does), and the digest the registry stored it under,
 * which is what gets signed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseValue } from '../functions/krm/yaml/index.js'
import { hasImage, imageTag, packageInfo, releaseTags, sourceUrl } from './image-names.js'
import { makeLocalBases } from './local-base.js'

export const defaultBase = 'node:22-slim'

/** The OCI labels of image `target`, built from `root` at `revision`. */
export function imageLabels(root: string, target: string, revision: string): Record<string, string> {
  const info = packageInfo(root)
  return {
    'org.opencontainers.image.title': target,
    'org.opencontainers.image.description': imageDescription(root, target),
    'org.opencontainers.image.source': sourceUrl(root),
    'org.opencontainers.image.url': info.homepage,
    'org.opencontainers.image.version': info.version,
    'org.opencontainers.image.revision': revision,
    'org.opencontainers.image.licenses': info.license,
  }
}

/** A function's description from its metadata.yaml (the catalog's), the orchestrator's from package.json. */
function imageDescription(root: string, target: string): string {
  if (target === 'kpt-variants') return packageInfo(root).description
  const metadata = parseValue(readFileSync(join(root, 'functions', target, 'metadata.yaml'), 'utf8')) as {
    description: string
  }
  return metadata.description
}

/** The commit the images are built from, with `-dirty` when tracked files differ from it (the image is then not that commit's). */
export async function sourceRevision(root: string): Promise<string> {
  const head = await execa('git', ['rev-parse', 'HEAD'], { cwd: root, reject: false })
  if (head.exitCode !== 0) return 'unknown'
  const status = await execa('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root })
  return `${String(head.stdout).trim()}${String(status.stdout).trim() ? '-dirty' : ''}`
}

/**
 * The build arguments that choose the bases: `base` if given; else node:22-slim when the engine has it or
 * can pull it; else (no registry reachable, or `localBase`) bases made from this machine's Node.
 */
export async function baseBuildArgs(
  engine: string,
  options: { base?: string; localBase?: boolean; log?: (line: string) => void },
): Promise<string[]> {
  if (options.base) return ['--build-arg', `BASE=${options.base}`]
  if (!options.localBase) {
    if (hasImage(engine, defaultBase)) return []
    if ((await execa(engine, ['pull', defaultBase], { reject: false })).exitCode === 0) return []
    options.log?.(
      `${defaultBase} cannot be pulled (no registry reachable): building on a base made from this machine's Node ${process.version}`,
    )
  }
  const bases = await makeLocalBases(engine)
  return ['--build-arg', `BASE=${bases.node}`, '--build-arg', `GIT_BASE=${bases.git}`]
}

export interface BuiltImage {
  target: string
  tag: string
  /** Bytes, as the engine reports the image's size. */
  size: number
  seconds: number
}

/** Builds image `target` of the Dockerfile in `root`, tagged and labelled. */
export async function buildImage(
  engine: string,
  root: string,
  target: string,
  options: { version: string; registry: string; revision: string; buildArgs: readonly string[] },
): Promise<BuiltImage> {
  const tag = imageTag(target, options.version, options.registry)
  const labels = Object.entries(imageLabels(root, target, options.revision)).flatMap(([k, v]) => [
    '--label',
    `${k}=${v}`,
  ])
  const started = performance.now()
  const build = await execa(
    engine,
    ['build', '--target', target, '--tag', tag, ...labels, ...options.buildArgs, root],
    { reject: false, all: true },
  )
  if (build.exitCode !== 0) throw new Error(`building ${tag} failed:\n${build.all}`)
  const size = await execa(engine, ['image', 'inspect', '--format', '{{.Size}}', tag])
  return { target, tag, size: Number(size.stdout), seconds: (performance.now() - started) / 1000 }
}

export interface PushedImage {
  target: string
  /** Every tag pushed: vX.Y.Z, and for a release version vX.Y and vX. */
  tags: string[]
  /** The manifest digest of each tag, as the registry stored it (`sha256:...`). */
  digests: Record<string, string>
}

/** Pushes image `target` (built as `imageTag(target, version, registry)`) under every tag a release gives it. */
export async function pushImage(
  engine: string,
  target: string,
  options: { version: string; registry: string; env?: Record<string, string> },
): Promise<PushedImage> {
  const built = imageTag(target, options.version, options.registry)
  const tags = releaseTags(target, options.version, options.registry)
  const env = { ...process.env, ...options.env }
  const work = mkdtempSync(join(tmpdir(), 'kpt-variants-push-'))
  const digests: Record<string, string> = {}
  try {
    for (const tag of tags) {
      if (tag !== built) await execa(engine, ['tag', built, tag], { env })
      const digestFile = join(work, 'digest')
      const push = await execa(engine, ['push', ...(engine === 'podman' ? ['--digestfile', digestFile] : []), tag], {
        env,
        reject: false,
        all: true,
      })
      if (push.exitCode !== 0) throw new Error(`pushing ${tag} failed:\n${push.all}`)
      digests[tag] = engine === 'podman' ? readFileSync(digestFile, 'utf8').trim() : await dockerDigest(tag, env)
      if (tag !== built) await execa(engine, ['rmi', tag], { env })
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return { target, tags, digests }
}

/** The digest docker recorded for `tag` when it pushed it. */
async function dockerDigest(tag: string, env: NodeJS.ProcessEnv): Promise<string> {
  const name = tag.slice(0, tag.lastIndexOf(':'))
  const { stdout } = await execa('docker', ['image', 'inspect', '--format', '{{json .RepoDigests}}', tag], { env })
  const digest = (JSON.parse(String(stdout)) as string[]).find((d) => d.startsWith(`${name}@`))
  if (!digest) throw new Error(`docker recorded no digest for ${tag}`)
  return digest.slice(name.length + 1)
}

/**
 * A CycloneDX SBOM of image `tag`: what npm, inside the image, finds installed in /app (the
 * dependencies the bundles were built from and the image ships), with the image's Node named as the
 * platform it runs on. Made by the image's own npm, as nobody and without a network, so it describes
 * that image and nothing of this machine.
 */
export async function imageSbom(engine: string, tag: string, env?: Record<string, string>): Promise<string> {
  const run = (args: string[]) =>
    execa(
      engine,
      [
        'run',
        '--rm',
        '--network',
        'none',
        '--env',
        'HOME=/tmp',
        '--entrypoint',
        'node',
        '--workdir',
        '/app',
        tag,
        ...args,
      ],
      { env: { ...process.env, ...env } },
    )
  const npm = '/usr/local/lib/node_modules/npm/bin/npm-cli.js'
  const [sbom, node] = await Promise.all([
    run([npm, 'sbom', '--sbom-format', 'cyclonedx', '--omit', 'dev', '--offline']),
    run(['--version']),
  ])
  const document = JSON.parse(String(sbom.stdout)) as {
    components?: unknown[]
    metadata?: { component?: Record<string, unknown> }
  }
  // npm names the subject after the directory it ran in (/app): the subject is the image.
  const at = tag.lastIndexOf(':')
  if (document.metadata?.component)
    Object.assign(document.metadata.component, {
      type: 'container',
      name: tag.slice(0, at),
      version: tag.slice(at + 1),
    })
  const nodeVersion = String(node.stdout).trim().replace(/^v/, '')
  document.components = [
    ...(document.components ?? []),
    {
      type: 'platform',
      name: 'node',
      version: nodeVersion,
      description: 'Node.js, the runtime of the image (its base)',
      purl: `pkg:generic/node@${nodeVersion}`,
    },
  ]
  return `${JSON.stringify(document, null, 2)}\n`
}
