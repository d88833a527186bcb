/** The settings of one render, after option parsing: plain data, so render threads get them as they are. */
import { resolve } from 'node:path'
import type { ConflictPolicy } from '../merge/update.js'
import type { GitSettings, SharedRepositories } from '../output/git/git-output.js'
import type { DeletionGuardSettings } from '../plan/deletion-guard.js'
import type { Shard } from '../plan/plan.js'
import type { RenderScope } from '../plan/scope.js'
import type { UpstreamCache } from '../upstream/git-source.js'
import type { UpstreamPins } from '../upstream/upstreams.js'

export interface RenderSettings {
  fleetDir: string
  /** The fleet's identity for the records kept between runs (default: the fleet directory); `--cluster` names the server, as its snapshot directory changes. */
  fleetId?: string
  /** Where relative repository paths resolve (default: the fleet directory). */
  repositoryBase?: string
  /** `group/Kind` of cluster-scoped kinds beyond the built-in ones (an API server's discovery). */
  clusterScoped?: string[]
  /** The kinds the API server serves, `apiVersion|Kind` (`--cluster`'s discovery): sets' selectors are checked against them. */
  servedKinds?: string[]
  outDir: string
  dryRun: boolean
  diff: boolean
  onConflict: ConflictPolicy
  shard?: Shard
  /** Render only these variants, open only these repositories (the controller's runs: plan/scope.ts). */
  scope?: RenderScope
  /** List the upstream repositories at these refs, without fetching them (the controller's runs between polls). */
  upstreamPins?: UpstreamPins
  allowExec: boolean
  /** `skip`: a pipeline with `image:` functions other than ours is not run (no container engine); default `run`. */
  imageFunctions?: 'run' | 'skip'
  /** The namespace of fleet objects that have none (`--namespace`, default `default`), as kubectl apply would give them. */
  namespace?: string
  /** `--git`: propose each package as a draft in its downstream repository instead of writing `outDir`. */
  git?: GitSettings
  /** With `git`: the repositories the main thread opened, as every thread reads them (set by the main thread). */
  repositories?: SharedRepositories
  /** Where remote upstream repositories are kept between runs (fetched once a run); none clones them afresh each run. */
  upstreamCache?: UpstreamCache
  /** `--cache`: where the run's failures are recorded for `status` (none: not recorded). */
  cacheDir?: string
  /** The record of earlier renders (memo.ts) to skip unchanged variants with, and to update; none renders everything. */
  memo?: string
  /** `--force`: render every variant, skipping none; the record is still updated (status reads it). */
  force?: boolean
  /** Threads rendering variants (default: defaultThreads()); the output is the same for any number. */
  threads?: number
  /** `--dependencies`: carry each repository's dependency plan out (`install`, the default), only report it (`check`), or skip the check (`off`). */
  dependencies?: 'install' | 'check' | 'off'
  /** The time the run acts at (`--now`): rollout gates and windows, the dates of the commits and tags it writes. */
  now?: Date
  /** `--max-deletions`, `--allow-deletions`: how many packages of a set a run may remove (plan/deletion-guard.ts). */
  deletionGuard?: DeletionGuardSettings
  /** `--skip-rollout`: publish (or with --out write) as if no Rollout paced the fleet. */
  skipRollout?: boolean
  /** kpt runs here (relative `exec:` paths resolve against it). */
  cwd: string
  env: Readonly<Record<string, string | undefined>>
}

/** The fleet's identity in the records kept between runs. */
export function fleetIdOf(settings: Pick<RenderSettings, 'fleetId' | 'fleetDir' | 'cwd'>): string {
  return settings.fleetId ?? resolve(settings.cwd, settings.fleetDir)
}
