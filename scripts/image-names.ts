/** The Dockerfile's image targets, how they are named and tagged and which engine builds and runs them; the scripts, tests and benchmark share these. */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Every image target: the six functions and the orchestrator. */
export const imageTargets: readonly string[] = [
  'package-context',
  'pipeline-prepend',
  'config-injection',
  'package-variant',
  'fan-out',
  'dependency-check',
  'kpt-variants',
]

/** The function images (every target but the orchestrator's); each has functions/<name>/metadata.yaml. */
export const functionTargets: readonly string[] = imageTargets.filter((target) => target !== 'kpt-variants')

/**
 * Where the project's images are published, and what `npm run images` names them without `--registry`: each
 * function's metadata.yaml names its image `<defaultRegistry>/<function>`, as the kpt function catalog's do.
 */
export const defaultRegistry = 'ghcr.io/kpt-variants'

/** `<registry>/<target>`, the image's name without a tag (a metadata.yaml's `image`). */
export function imageName(target: string, registry: string = defaultRegistry): string {
  return `${registry.replace(/\/+$/, '')}/${target}`
}

/** `<registry>/<target>:v<version>`, as the catalog tags a function's release `vX.Y.Z`. */
export function imageTag(target: string, version: string, registry: string = defaultRegistry): string {
  return `${imageName(target, registry)}:v${version}`
}

/**
 * Every tag a release of `version` gives an image, as the catalog's release scripts do: `vX.Y.Z`, `vX.Y` and
 * `vX` (the last two move to each newer patch or minor release); a pre-release (`1.0.0-rc.1`) only its own.
 */
export function releaseTags(target: string, version: string, registry: string = defaultRegistry): string[] {
  const full = imageTag(target, version, registry)
  const plain = /^(\d+)\.(\d+)\.\d+$/.exec(version)
  if (!plain) return [full]
  const name = imageName(target, registry)
  return [full, `${name}:v${plain[1]}.${plain[2]}`, `${name}:v${plain[1]}`]
}

/** package.json of `root`: the version, the one place it is written, and what the images' labels say. */
export interface PackageInfo {
  version: string
  description: string
  license: string
  homepage: string
  repository: { url: string }
}

export function packageInfo(root: string): PackageInfo {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageInfo
}

/** The version images are tagged with: the package's, from package.json in `root`. */
export function packageVersion(root: string): string {
  return packageInfo(root).version
}

/** The repository's web address (`https://github.com/OWNER/NAME`), from package.json's `repository.url` (`git+https://....git`). */
export function sourceUrl(root: string): string {
  return packageInfo(root)
    .repository.url.replace(/^git\+/, '')
    .replace(/\.git$/, '')
}

/** The engine kpt would use, if it is installed: $KPT_FN_RUNTIME, else podman, else docker. */
export function installedEngine(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const wanted = env['KPT_FN_RUNTIME']
  return (wanted ? [wanted] : ['podman', 'docker']).find((name) => spawnSync(name, ['--version']).status === 0)
}

/** Whether `engine` has `image` locally (it never pulls). */
export function hasImage(engine: string, image: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return spawnSync(engine, ['image', 'inspect', image], { env }).status === 0
}
