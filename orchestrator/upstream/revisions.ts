/**
 * Porch's published package revisions, read from git: revision N of package P
 * is the tag `<directory>/<P>/vN` (Porch's `createFinalTagNameInLocal`), its
 * workspace name comes from the `kpt:` annotation Porch writes into the commit
 * message (else `vN`), and only a directory with a Kptfile is a package.
 */
import type { Repository } from '../../functions/api/repository.js'
import { KubeObject } from '../../functions/krm/index.js'

export const packageRevisionApiVersion = 'porch.kpt.dev/v1alpha1'
export const packageRevisionKind = 'PackageRevision'

/** One published revision of a package in a repository. */
export interface PackageRevision {
  /**
   * `published`: revision N, the tag `<package dir>/vN`; `named`: older Porch's
   * revision of a name, the tag `<package dir>/<name>`; `placeholder`: the head of
   * the repository's branch (Porch's placeholder revision, revision -1).
   */
  kind: 'published' | 'named' | 'placeholder'
  /** The Repository object's name. */
  repository: string
  namespace: string
  /** The package path relative to the repository's directory, e.g. `nginx` or `network/upf`. */
  packageName: string
  /** N for `published`, -1 (as Porch lists the placeholder) otherwise. */
  revision: number
  workspaceName: string
  /** The git ref the revision is read from: a tag name, or the branch name of the placeholder. */
  ref: string
  commit: string
  /** The package's directory in git, from the repository root. */
  directory: string
}

/** What a published revision declares: its root PackageManifest's version and the Kubernetes versions it runs on. */
export interface RevisionVersion {
  version: string
  kubernetesVersion?: string
}

/** Declared versions by revision list key (`revisionKey`) and revision number: for the packages some variant follows by version. */
export type VersionIndex = ReadonlyMap<string, ReadonlyMap<number, RevisionVersion>>

/** A tag that may name a package revision: `<package dir>/v<N>`. */
export interface RevisionTag {
  tag: string
  directory: string
  revision: number
}

/**
 * Parses the tags of a repository whose packages live under `directory`;
 * release tags and tags outside the directory are not package revisions.
 */
export function parseRevisionTags(tags: Iterable<string>, directory: string): RevisionTag[] {
  const out: RevisionTag[] = []
  for (const tag of tags) {
    const match = /^(.+)\/v([1-9][0-9]*)$/.exec(tag)
    if (!match) continue
    const dir = match[1]!
    if (directory !== '' && !dir.startsWith(`${directory}/`)) continue
    out.push({ tag, directory: dir, revision: Number(match[2]) })
  }
  return out.sort((a, b) =>
    a.directory === b.directory ? a.revision - b.revision : a.directory < b.directory ? -1 : 1,
  )
}

/**
 * Older Porch's named revisions: tags `<package dir>/<name>` that are not
 * `vN` (e.g. `oai-nrf/r2`, `upf/v4.0.0`), inside the repository directory.
 */
export function parseNamedRevisionTags(
  tags: Iterable<string>,
  directory: string,
): { tag: string; directory: string; name: string }[] {
  const out: { tag: string; directory: string; name: string }[] = []
  for (const tag of tags) {
    const slash = tag.lastIndexOf('/')
    if (slash <= 0 || /\/v[1-9][0-9]*$/.test(tag)) continue
    const dir = tag.slice(0, slash)
    if (directory !== '' && !dir.startsWith(`${directory}/`)) continue
    out.push({ tag, directory: dir, name: tag.slice(slash + 1) })
  }
  return out.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0))
}

/** How a report names a revision: `v2`, a revision's name, or `main@<commit>` for a branch head. */
export function revisionLabel(
  pr: Pick<PackageRevision, 'kind' | 'revision' | 'workspaceName' | 'ref' | 'commit'>,
): string {
  if (pr.kind === 'published') return `v${pr.revision}`
  if (pr.kind === 'named') return pr.workspaceName
  return `${pr.ref}@${pr.commit.slice(0, 12)}`
}

/** The workspace name Porch recorded for `packageDir` in a commit message (`kpt:{"package":…,"workspaceName":…}`). */
export function workspaceFromMessage(message: string, packageDir: string): string | undefined {
  for (const line of message.split('\n')) {
    const trimmed = line.trim()
    if (!trimmed.startsWith('kpt:')) continue
    try {
      const annotation = JSON.parse(trimmed.slice(4)) as { package?: unknown; workspaceName?: unknown }
      if (
        annotation.package === packageDir &&
        typeof annotation.workspaceName === 'string' &&
        annotation.workspaceName !== ''
      ) {
        return annotation.workspaceName
      }
    } catch {
      // Porch skips annotations it cannot parse.
    }
  }
  return undefined
}

/** Porch's `ComposePkgRevObjName`: `<repo>.<dotted package path>.<workspace>`. */
export function packageRevisionName(repository: string, packageName: string, workspaceName: string): string {
  return `${repository}.${packageName.split('/').filter(Boolean).join('.')}.${workspaceName}`
}

/** The PackageRevision object fan-out and the other functions see, as Porch would list it. */
export function packageRevisionObject(pr: PackageRevision): KubeObject {
  const metadata: Record<string, unknown> = {
    name: packageRevisionName(pr.repository, pr.packageName, pr.workspaceName),
  }
  if (pr.namespace) metadata['namespace'] = pr.namespace
  return KubeObject.fromObject({
    apiVersion: packageRevisionApiVersion,
    kind: packageRevisionKind,
    metadata,
    spec: {
      packageName: pr.packageName,
      repository: pr.repository,
      revision: pr.revision,
      workspaceName: pr.workspaceName,
      lifecycle: 'Published',
    },
  })
}

/** The revisions of a repository, given its tags, whether each tagged package has a Kptfile, and commit messages. */
export function revisionsOf(
  repo: Pick<Repository, 'name' | 'namespace' | 'directory'>,
  tags: readonly RevisionTag[],
  commits: ReadonlyMap<string, string>,
  hasKptfile: readonly boolean[],
  messages: readonly string[],
): PackageRevision[] {
  const out: PackageRevision[] = []
  tags.forEach((t, i) => {
    if (!hasKptfile[i]) return
    out.push({
      kind: 'published',
      repository: repo.name,
      namespace: repo.namespace,
      packageName: repo.directory === '' ? t.directory : t.directory.slice(repo.directory.length + 1),
      revision: t.revision,
      workspaceName: workspaceFromMessage(messages[i] ?? '', t.directory) ?? `v${t.revision}`,
      ref: t.tag,
      commit: commits.get(t.tag)!,
      directory: t.directory,
    })
  })
  return out
}
