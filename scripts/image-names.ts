/** The Dockerfile's image targets, how they are tagged and which engine builds and runs them; the script, tests and benchmark share these. */
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

/** `kpt-variants/<target>:<version>`; a local image, so engines store it as `localhost/kpt-variants/...`. */
export function imageTag(target: string, version: string): string {
  return `kpt-variants/${target}:${version}`
}

/** The version images are tagged with: the package's, from package.json in `root`. */
export function packageVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
}

/** The engine kpt would use, if it is installed: $KPT_FN_RUNTIME, else podman, else docker. */
export function installedEngine(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const wanted = env['KPT_FN_RUNTIME']
  return (wanted ? [wanted] : ['podman', 'docker']).find((name) => spawnSync(name, ['--version']).status === 0)
}

/** Whether `engine` has `image` locally (it never pulls). */
export function hasImage(engine: string, image: string): boolean {
  return spawnSync(engine, ['image', 'inspect', image]).status === 0
}
