/**
 * `config.porch.kpt.dev/v1alpha1 Repository` (Porch's schema): the git
 * location of packages. Deployment repositories (`spec.deployment: true`) are
 * where variants go; the others hold blueprints.
 */
import type { KubeObject } from '../krm/index.js'
import { Decoder } from './decode.js'
import type { FieldError } from './decode.js'

export const repositoryGroup = 'config.porch.kpt.dev'
export const repositoryApiVersion = 'config.porch.kpt.dev/v1alpha1'
export const repositoryKind = 'Repository'
/** Porch's default branch when `spec.git.branch` is empty. */
export const defaultBranch = 'main'

/** A git Repository as the orchestrator uses it. */
export interface Repository {
  object: KubeObject
  name: string
  namespace: string
  /** `spec.git.repo`: a URL git can clone, a `file://` URL or a local path. */
  url: string
  /** `spec.git.branch`, default `main`. */
  branch: string
  /** `spec.git.directory` without leading or trailing `/`: `""` is the repository root. */
  directory: string
  deployment: boolean
}

/** True for any version of Porch's Repository kind. */
export function isRepository(object: KubeObject): boolean {
  return object.isGroupKind(repositoryGroup, repositoryKind)
}

/** Reads a Repository; one that is not a git repository, or has no `spec.git.repo`, is an error. */
export function readRepository(
  object: KubeObject,
): { ok: true; value: Repository } | { ok: false; errors: FieldError[] } {
  const d = new Decoder(object)
  const type = d.string(['spec', 'type'])
  const url = d.string(['spec', 'git', 'repo'])
  const branch = d.string(['spec', 'git', 'branch'])
  const directory = d.string(['spec', 'git', 'directory'])
  const deployment = d.boolean(['spec', 'deployment'])
  if (d.errors.length > 0) return { ok: false, errors: d.errors }
  if (type !== undefined && type !== 'git') {
    return {
      ok: false,
      errors: [
        {
          field: 'spec.type',
          message: `\`spec.type\` ${JSON.stringify(type)} is not supported: only git repositories are`,
        },
      ],
    }
  }
  if (!url) return { ok: false, errors: [{ field: 'spec.git.repo', message: '`spec.git.repo` must not be empty' }] }
  return {
    ok: true,
    value: {
      object,
      name: object.name,
      namespace: object.namespace,
      url,
      branch: branch || defaultBranch,
      directory: (directory ?? '').replace(/^\/+|\/+$/g, ''),
      deployment: deployment ?? false,
    },
  }
}
