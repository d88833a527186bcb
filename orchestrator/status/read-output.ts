/**
 * What `status` reads of the output, through the same Output a render reads
 * (run/setup.ts opens it): each planned variant's package, the packages a
 * render installed as dependencies (`otherPackages`, marked on their
 * Kptfile), their local edits (local-edits.ts) and, with `--git`, their tags
 * and drafts; and from all of them, each repository's dependency graph.
 */
import { dependencyObjects, rootManifest } from '../package/dependency-objects.js'
import type { PackageFiles } from '../package/files.js'
import { readPackageRecord } from '../package/ownership.js'
import { notReadyReason } from '../package/readiness.js'
import { ResourceCodec } from '../package/resources.js'
import { splitPath } from '../output/output.js'
import type { StoredPackage } from '../output/output.js'
import type { RepositorySnapshot } from '../output/git/repository.js'
import type { MemoEntry } from '../run/memo.js'
import type { Run } from '../run/setup.js'
import { sharedRepositories } from '../run/setup.js'
import { outputGraph } from './dependency-graph.js'
import type { DeclaredPackage } from './dependency-graph.js'
import type { OutputState, StoredState } from './fleet-status.js'
import { directoryEdits, gitEdits } from './local-edits.js'
import { catFileBatch } from '../git/git.js'
import { draftDeclaration } from '../output/git/messages.js'
import { appendTo } from '../util/collections.js'

/** Reads the output of `run`; `recorded`: with `--out`, the record of earlier renders' entries by path (RenderMemo.read). */
export async function readOutput(run: Run, recorded: Readonly<Record<string, MemoEntry>> = {}): Promise<OutputState> {
  const { output, plan } = run
  const snapshots = new Map((sharedRepositories(run)?.snapshots ?? []).map((s) => [s.name, s]))
  const git = output.drafts
  const codec = new ResourceCodec()
  const declared: DeclaredPackage[] = []
  // What status shows of a package: with --git the published one (what the branch holds), its tag and its draft.
  const state = (path: string, stored: StoredPackage): StoredState => {
    const files = stored.published
    const s: StoredState = {}
    if (files) s.record = readPackageRecord(files)
    const { repo, pkg } = splitPath(path)
    const snapshot = snapshots.get(repo)
    const revisions = snapshot?.published[pkg] ?? []
    if (revisions.length > 0) s.published = revisions[revisions.length - 1]!.tag
    if (snapshot?.drafts[pkg]) s.draft = snapshot.drafts[pkg].branch
    const manifest = declaration(codec, files ?? stored.draft, output.packageDir(path))
    if (manifest) s.manifest = { name: manifest.name, ...(manifest.version ? { version: manifest.version } : {}) }
    if (manifest && files)
      declared.push({ path, manifest, installedAsDependency: s.record?.installedAsDependency === true })
    // The draft is what would be published next; without one, the package as it is.
    const shown = stored.draft ?? files
    const notReady = shown && notReadyReason(shown)
    if (notReady) s.notReady = notReady
    if (files && !git) {
      const entry = recorded[path]
      s.edits = directoryEdits(entry, entry?.stat !== undefined ? output.statDigest(path) : undefined, stored)
    }
    return s
  }

  const paths = plan.variants.map((v) => `${v.downstream.repo}/${v.downstream.package}`)
  await output.prefetch(paths, { alone: true })
  const packages = new Map<string, StoredState>()
  for (const path of paths) packages.set(path, state(path, await output.read(path)))
  const dependencies = new Map<string, StoredState>()
  for (const [path, stored] of await output.otherPackages(new Set(paths))) {
    const files = stored.published ?? stored.draft
    if (files && readPackageRecord(files).installedAsDependency) dependencies.set(path, state(path, stored))
  }
  if (git) {
    await addGitEdits(snapshots, [packages, dependencies])
    await addRevisionMetadata(snapshots, packages)
  }
  return {
    output: git ? 'git' : 'directory',
    packages,
    dependencies,
    repositories: outputGraph(declared, run.fleet.objects),
  }
}

/** The root PackageManifest of a package, if it has one that can be read. */
function declaration(
  codec: ResourceCodec,
  files: PackageFiles | undefined,
  root: string,
): DeclaredPackage['manifest'] | undefined {
  if (!files) return undefined
  try {
    return rootManifest(dependencyObjects(codec, files, root), root)
  } catch {
    // Not YAML: the render of its repository says why; status shows the rest.
    return undefined
  }
}

/** With --git: each package's revision labels and annotations, from its draft's commit message, else its latest tag's (one git process per repository). */
async function addRevisionMetadata(
  snapshots: ReadonlyMap<string, RepositorySnapshot>,
  states: Map<string, StoredState>,
): Promise<void> {
  const byRepo = new Map<string, { pkg: string; commit: string }[]>()
  for (const path of states.keys()) {
    const { repo, pkg } = splitPath(path)
    const snapshot = snapshots.get(repo)
    const revisions = snapshot?.published[pkg] ?? []
    const commit = snapshot?.drafts[pkg]?.commit ?? revisions[revisions.length - 1]?.commit
    if (commit) appendTo(byRepo, repo, { pkg, commit })
  }
  for (const [repo, wanted] of byRepo) {
    const objects = await catFileBatch(
      snapshots.get(repo)!.clone,
      wanted.map((w) => w.commit),
    )
    wanted.forEach(({ pkg }, i) => {
      const object = objects[i]
      if (!object || !('content' in object)) return
      const declared = draftDeclaration(object.content.toString('utf8'))
      const s = states.get(`${repo}/${pkg}`)!
      s.labels = declared.labels
      s.annotations = declared.annotations
    })
  }
}

/** With --git: the local edits of every published package, a repository at a time. */
async function addGitEdits(
  snapshots: ReadonlyMap<string, RepositorySnapshot>,
  states: readonly Map<string, StoredState>[],
): Promise<void> {
  const byRepo = new Map<string, string[]>()
  for (const map of states) {
    for (const [path, s] of map) {
      if (!s.record) continue
      const { repo, pkg } = splitPath(path)
      appendTo(byRepo, repo, pkg)
    }
  }
  for (const [repo, pkgs] of byRepo) {
    const snapshot = snapshots.get(repo)
    if (!snapshot) continue
    const edits = await gitEdits(snapshot, pkgs)
    for (const map of states) {
      for (const pkg of pkgs) {
        const s = map.get(`${repo}/${pkg}`)
        const e = edits.get(pkg)
        if (s && e) s.edits = e
      }
    }
  }
}
