/**
 * The fleet page's model: the types the adapters (model.ts) produce and the
 * page's script (browser.ts, view.ts) reads. No imports but types: the page's
 * bundle takes this file as it is.
 */
import type { Failure } from '../report/failure.js'
import type { ConflictReport } from '../report/report.js'

/**
 * A cell's state, most urgent first: the first that applies is shown. `held`
 * is a variant a rollout step holds back (reports carry it once rollouts exist).
 */
export const pageStates = [
  'failed',
  'conflicts',
  'not-ready',
  'held',
  'draft',
  'behind',
  'edited',
  'created',
  'updated',
  'deleted',
  'orphaned',
  'unpublished',
  'unrendered',
  'published',
  'current',
  'installed',
  'unchanged',
] as const
export type PageState = (typeof pageStates)[number]

/** What each state means, for the page's legend. */
export const stateDescriptions: Record<PageState, string> = {
  failed: 'the render failed (or failed last time)',
  conflicts: 'a field changed both upstream and downstream',
  'not-ready': 'a readiness gate is not True: its draft is not published',
  held: 'held back by a rollout step',
  draft: 'an open draft waits for review',
  behind: 'published (with --out: rendered) at another upstream revision than the wanted one',
  edited: 'changed by hand since the last render (with --git: since it was published)',
  created: 'a new package',
  updated: 'the package changes',
  deleted: 'the package is deleted',
  orphaned: 'the package is kept, no longer owned',
  unpublished: 'never published',
  unrendered: 'not in the output directory',
  published: 'published at the wanted upstream revision',
  current: 'rendered at the wanted upstream revision',
  installed: "installed as another package's dependency",
  unchanged: 'nothing to do',
}

/** A PackageVariant condition, as `render --cluster` writes it. */
export interface PageCondition {
  type: string
  status: string
  reason: string
  message: string
}

/** One variant: a cell of the matrix, and its detail. */
export interface PageVariant {
  /** The downstream repository ('' when the variant never got one). */
  repo: string
  /** The downstream package ('' when unknown). */
  package: string
  /** `PackageVariant ns/name` (or the set and target that could not make one). */
  subject: string
  /** The PackageVariantSet that generated it (`ns/name`). */
  set?: string
  state: PageState
  labels: Record<string, string>
  upstream?: string
  /** When it follows a version: `v1.4.0 by ">=1.0.0 <2.0.0"`. */
  follows?: string
  /** The newest published version beyond the constraint it follows, when newer. */
  newest?: string
  previousUpstream?: string
  /** `status`: the upstream revision the package holds (its upstreamLock). */
  rendered?: string
  /** `status`: local edits, `none`, `edited` or `unknown`, with why. */
  localEdits?: string
  /** A dependency's version (its PackageManifest's). */
  version?: string
  published?: string
  draft?: string
  /** The rollout step holding it back. */
  heldBy?: string
  /** Why its package is not ready: a readiness gate of its Kptfile whose condition is not True. */
  notReady?: string
  injected: string[]
  /** Why it failed, each with its code (no stack: the page is shared). */
  reasons: Failure[]
  warnings: string[]
  conflicts: ConflictReport[]
  conditions: PageCondition[]
  /** What the dependency check said about this package (the lines of its reasons and warnings about dependencies). */
  dependencyPlan: string[]
  diff?: string
}

/** A package of a repository's dependency graph. */
export interface DependencyPackage {
  name: string
  version?: string
  /** Installed to satisfy another package, not asked for by a PackageVariant. */
  installedAsDependency: boolean
  requires: { name: string; range: string }[]
}

/** One downstream repository's packages and what they need. */
export interface RepositoryDependencies {
  name: string
  packages: DependencyPackage[]
}

export interface PageModel {
  /** `render` (a RenderReport) or `status` (a FleetStatus). */
  source: 'render' | 'status'
  title: string
  dryRun: boolean
  variants: PageVariant[]
  problems: string[]
  repositories: RepositoryDependencies[]
}
