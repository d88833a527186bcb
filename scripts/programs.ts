/**
 * Each KRM function's program: its name (bin/<name>, the image, `exec:`) and
 * the export of functions/<name>/index.ts it runs. scripts/bundle.ts bundles
 * one program per entry; the hostile corpus runs every one of them.
 */
export const functionPrograms = [
  { name: 'package-context', fn: 'packageContextFunction' },
  { name: 'pipeline-prepend', fn: 'pipelinePrependFunction' },
  { name: 'config-injection', fn: 'configInjectionFunction' },
  { name: 'package-variant', fn: 'packageVariantFunction' },
  { name: 'fan-out', fn: 'fanOutFunction' },
  { name: 'dependency-check', fn: 'dependencyCheckFunction' },
] as const
