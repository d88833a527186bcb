/**
 * Where a run's packages go, and what is there now: a directory (`--out DIR`,
 * directory/) or the downstream repositories of the fleet (`--git`, git/).
 * A render reads a variant's package as the output holds it, renders it,
 * stages the result, and at the end of the run the main thread commits what
 * passed the dependency check, handles abandoned packages and records the
 * run. Every thread of a run has an output of its own; the main thread's
 * also commits.
 */
import type { PackageFiles } from '../package/files.js'
import type { RunReport, VariantReport } from '../report/report.js'
import type { PublishedRevision } from '../rollout/types.js'

/** A package as the output holds it: with `--git` the published branch's package and its open draft. */
export interface StoredPackage {
  published?: PackageFiles
  draft?: PackageFiles
  /**
   * A directory's: the metadata digest of the published package as it was
   * read (statPackageDirectory's), when it can be trusted; recorded for a
   * render that leaves the package as it is, which need not walk it again.
   */
  stat?: string
}

/** How a share of a run reads ahead. */
export interface PrefetchOptions {
  /** No other thread renders. */
  alone: boolean
  /**
   * The digests (statDigest's) that the record of earlier renders holds for
   * the paths whose inputs are unchanged: a package that still has its
   * digest is skipped without being read, so it need not be read ahead.
   */
  recorded?: ReadonlyMap<string, string>
}

/** A rendered package waiting to be committed: plain data, so a render thread can post it to the main thread. */
export type StagedPackage =
  /** Written to a staging directory inside the output directory, renamed into place on commit. */
  | { dir: string }
  /** Held in memory until the run's drafts are written (git output: it goes straight into git, never to disk). */
  | { files: PackageFiles }

/** A staged package and the report of the variant it belongs to. */
export interface StagedChange {
  report: VariantReport
  staged: StagedPackage
}

/** A package to remove, or with `orphan` to keep without its owner, as the output holds it. */
export interface Removal {
  /** Its report entry (`deleted` or `orphaned`), given the diff on a dry run with `diff`. */
  report: VariantReport
  stored: StoredPackage
  orphan: boolean
}

/** How a run removes packages. */
export interface RemovalSettings {
  dryRun: boolean
  diff: boolean
  /** Git output: publish the removal (or orphaning) drafts in the same write (`--publish`, deletions with `--publish-deletions`). */
  publish?: { orphans: boolean; deletions: boolean }
}

/**
 * One thread's view of the output: reading packages by path (`<repo>/<package>`).
 * What only some outputs do is a capability of its own, which callers test
 * for: staging rendered packages (`Staging`), taking digests after a write
 * (`Restat`); the main thread's output also commits (`RunOutput`).
 */
export interface Output {
  /** `--git`: packages become drafts (the summary and the record of renders differ). */
  readonly drafts: boolean
  /** The directory of a package path: where a pipeline run by kpt renders it, and the path its objects are annotated with. */
  packageDir(path: string): string
  /** Reads the packages of many paths at once, ahead of `read` (a share of a run). */
  prefetch(paths: readonly string[], options?: PrefetchOptions): Promise<void>
  read(path: string): Promise<StoredPackage>
  /**
   * A digest of the package that changes whenever its files do, where that is
   * cheaper than reading them: its files' metadata, or with --git its trees'
   * ids. Each path answers once, as the package may then be rewritten.
   */
  statDigest(path: string): string | undefined
  /** Ends the thread's use of the output (read-ahead stopped, scratch files removed). */
  close(): void
}

/**
 * An output that stages rendered packages itself until the commit (a
 * directory: written in the background into staging directories, renamed
 * into place on commit). Without it a staged package is held in memory,
 * `{ files }`, and the commit writes it (git: straight into the repository).
 */
export interface Staging {
  /** Before rendering (the main thread): removes what a crashed run left staged. */
  prepare(): void
  /** Stages a rendered package (in the background where it can); `settle` says which could not be. */
  stage(files: PackageFiles): Promise<StagedPackage>
  /** Waits for the packages staged in the background; returns the error of each that could not be staged, by its staging directory. */
  settle(): Promise<Map<string, string>>
  /** Drops a staged package. */
  discard(staged: StagedPackage): void
}

/**
 * An output whose digests (statDigest) of the packages a run wrote are taken
 * once the write is done (git: the trees pushed); without it, a digest is
 * taken when asked for.
 */
export interface Restat {
  /** Takes the digests of `paths` as the run left them, for statDigest. */
  restat(paths: readonly string[]): Promise<void>
}

/** True when the output stages packages itself (see Staging). */
export function stages<O extends Output>(output: O): output is O & Staging {
  return 'stage' in output
}

/** True when the output takes its digests after a write (see Restat). */
export function restats<O extends Output>(output: O): output is O & Restat {
  return 'restat' in output
}

/** What the output holds of a package for publishing it: its latest published revision, and its open draft. */
export interface PackageState {
  /** `upstream` is `''` where it was not asked for or is not known. */
  published?: PublishedRevision
  /** An open draft (git output); `conflicts` and `removes` where asked for; why its package is not ready, always. */
  draft?: { conflicts?: boolean; removes?: boolean; notReady?: string }
}

/** What `packageStates` reads beyond the cheap: the upstream revision each was published from, the open draft's content. */
export interface StateReads {
  upstreams: ReadonlySet<string>
  drafts: ReadonlySet<string>
}

/** The main thread's output: it also commits the run. */
export interface RunOutput extends Output {
  /** The state of each package path (see StateReads for what is read beyond its latest revision and open draft). */
  packageStates(paths: readonly string[], reads: StateReads): Promise<Map<string, PackageState>>
  /**
   * Commits the staged packages that passed the dependency check; a package
   * that cannot be committed fails its variant. `publish` (git output): the
   * packages, by path, published in the same write (a change of this commit
   * as it is, any other from its open draft), each publish recorded on the
   * report given; with the open drafts they need (their `Requires`), whose
   * publishes are recorded on new reports, returned.
   */
  commit(changes: readonly StagedChange[], publish?: ReadonlyMap<string, VariantReport>): Promise<VariantReport[]>
  /**
   * Every package of the output's repositories but those at `rendered` paths, as the output holds it (`<repo>/<package>` -> files);
   * with `only`, just those of them (a scoped run's: plan/scope.ts).
   */
  otherPackages(rendered: ReadonlySet<string>, only?: readonly string[]): Promise<Map<string, StoredPackage>>
  /**
   * Deletes or orphans packages (with `dryRun` only describes them); returns
   * those it removed or would remove: a removal already proposed (an open
   * draft that is this very change) is left out.
   */
  remove(removals: readonly Removal[], settings: RemovalSettings): Promise<Removal[]>
  /** Records the run's failures for `kpt-variants status`. */
  record(report: RunReport): void
}

/** `<repo>/<package>` split at the first slash. */
export function splitPath(path: string): { repo: string; pkg: string } {
  const slash = path.indexOf('/')
  return { repo: path.slice(0, slash), pkg: path.slice(slash + 1) }
}

/** The staging directory of a staged package, if it has one. */
export function stagedDir(staged: StagedPackage): string | undefined {
  return 'dir' in staged ? staged.dir : undefined
}
