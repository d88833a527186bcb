/**
 * The pure part of one variant: decide what its downstream is (new, current,
 * or to be updated from another upstream revision), and apply the
 * PackageVariant to it in-process with the package-variant transform
 * (package context, pipeline prepend, config injection, in Porch's order),
 * recording the owner on the Kptfile. No I/O: the caller reads the packages.
 */
import { applyTransform, findKptfile, ResourceList } from '../../functions/krm/index.js'
import { applyPackageVariant as applyMutations } from '../../functions/package-variant/index.js'
import type { InjectionOutcome } from '../../functions/config-injection/index.js'
import type { KubeObject, Result } from '../../functions/krm/index.js'
import type { PlannedVariant } from '../plan/plan.js'
import type { PackageFiles } from '../package/files.js'
import type { ResourceCodec } from '../package/resources.js'
import { readPackageRecord, recordDependency, recordOwner } from '../package/ownership.js'
import type { PackageRecord } from '../package/ownership.js'

/** What the downstream of a variant is before rendering. */
export type Downstream =
  | { kind: 'new' }
  /** Owned (or adopted) and already at the wanted upstream revision. */
  | { kind: 'current'; files: PackageFiles; adopted: boolean }
  /** Owned (or adopted) at another upstream revision (or none): a 3-way merge comes first. */
  | { kind: 'update'; files: PackageFiles; adopted: boolean; lock: PackageRecord['lock'] }

/**
 * Classifies an existing downstream package: ours, adoptable (`adoptExisting`),
 * or someone else's, which `adoptNone` leaves alone (a failure with the reason).
 */
export function classifyDownstream(
  variant: PlannedVariant,
  current: PackageFiles | undefined,
  upstreamRepoUrl: string,
): { ok: true; downstream: Downstream } | { ok: false; message: string } {
  if (!current) return { ok: true, downstream: { kind: 'new' } }
  const record = readPackageRecord(current)
  let adopted = false
  if (variant.dependency) {
    // A dependency moves a package installed as one, or one someone installed on purpose, never a PackageVariant's.
    if (record.owner)
      return {
        ok: false,
        message: `${variant.downstream.repo}/${variant.downstream.package} is the package of PackageVariant ${record.owner}: a dependency is not installed over it`,
      }
  } else if (record.owner !== variant.key) {
    if ((variant.pv.spec.adoptionPolicy || 'adoptNone') !== 'adoptExisting') {
      const owner = record.owner ? `owned by PackageVariant ${record.owner}` : 'not owned by any PackageVariant'
      return {
        ok: false,
        message: `downstream package ${variant.downstream.repo}/${variant.downstream.package} exists and is ${owner}; adoptionPolicy adoptNone leaves it alone (adoptExisting takes it over)`,
      }
    }
    adopted = true
  }
  const lock = record.lock
  const wanted = variant.upstream
  const sameRevision =
    lock !== undefined &&
    lock.commit === wanted.commit &&
    lock.ref === wanted.ref &&
    trimSlashes(lock.directory) === wanted.directory &&
    sameRepo(lock.repo, upstreamRepoUrl)
  if (sameRevision) return { ok: true, downstream: { kind: 'current', files: current, adopted } }
  return { ok: true, downstream: { kind: 'update', files: current, adopted, lock } }
}

/** The outcome of applying a PackageVariant to a package; `injected`: what config injection put in it, `Kind name <- injected name`. */
export type Applied =
  | { ok: true; files: PackageFiles; results: Result[]; injected: string[] }
  | { ok: false; results: Result[]; injected: string[] }

/** Applies the PackageVariant's mutations and records its owner; on any error result nothing is returned. */
export function applyPackageVariant(
  variant: PlannedVariant,
  files: PackageFiles,
  codec: ResourceCodec,
  sources: readonly KubeObject[],
): Applied {
  const resources = codec.read(files)
  const found = findKptfile(resources.items)
  const rl = ResourceList.of(resources.items, variant.pv.object)
  if (variant.dependency) {
    // A dependency gets its mark (a package installed on purpose keeps none), and mutations only where a policy configures it.
    if (!found.ok) return { ok: false, results: [{ severity: 'error', message: found.message }], injected: [] }
    if (!variant.dependency.asDependency) return { ok: true, files, results: [], injected: [] }
    recordDependency(found.kptfile.object, variant.dependency.deletionPolicy)
    if (!variant.dependency.configured) {
      const written = codec.write(resources, rl.items, files)
      return { ok: true, files: written.files, results: warningResults(written.warnings), injected: [] }
    }
  } else if (found.ok) {
    const owner: { key: string; set?: string; deletionPolicy: 'delete' | 'orphan' } = {
      key: variant.key,
      deletionPolicy: variant.pv.spec.deletionPolicy === 'orphan' ? 'orphan' : 'delete',
    }
    if (variant.set) owner.set = variant.set
    recordOwner(found.kptfile.object, owner)
  }
  // The plan read and validated the PackageVariant; the transform need not read it again.
  let outcomes: InjectionOutcome[] = []
  applyTransform(
    {
      name: 'package-variant',
      transform: (list, options) => void (outcomes = applyMutations(list, variant.pv, options)),
    },
    rl,
    { sources },
  )
  const injected = outcomes.flatMap((o) =>
    o.injected !== undefined ? [`${o.point.object.kind} ${o.point.object.name} <- ${o.injected}`] : [],
  )
  if (rl.results.hasErrors()) return { ok: false, results: rl.results.items, injected }
  const written = codec.write(resources, rl.items, files)
  return {
    ok: true,
    files: written.files,
    results: [...rl.results.items, ...warningResults(written.warnings)],
    injected,
  }
}

function warningResults(warnings: readonly string[]): Result[] {
  return warnings.map((message) => ({ severity: 'warning', message }))
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '')
}

/** Repository URLs name the same repository when they differ only by a trailing `.git` or `/`. */
export function sameRepo(a: string, b: string): boolean {
  const norm = (url: string) => url.replace(/\/+$/, '').replace(/\.git$/, '')
  return norm(a) === norm(b)
}
