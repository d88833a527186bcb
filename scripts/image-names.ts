/** The Dockerfile's image targets and how they are tagged; tests and the benchmark use the same names. */

/** Every image target: the six functions and the orchestrator. */
export const imageTargets: readonly string[] = ['package-context', 'pipeline-prepend', 'config-injection', 'package-variant', 'fan-out', 'dependency-check', 'kpt-variants']

/** `kpt-variants/<target>:<version>`; a local image, so engines store it as `localhost/kpt-variants/...`. */
export function imageTag(target: string, version: string): string {
  return `kpt-variants/${target}:${version}`
}
