/**
 * One variant from plan to staged package: read the downstream, clone or
 * 3-way update it, apply the PackageVariant, run its pipeline, and stage the
 * result for writing. Every failure is caught into the variant's report, so
 * the others go on. Used by the main thread and by worker threads alike.
 */
import { KubeObject } from '../../functions/krm/index.js'
import { clonePackage, kptRepoUrl, prepareRevision } from '../clone/clone.js'
import type { PreparedRevision } from '../clone/clone.js'
import type { Fleet } from '../fleet/fleet.js'
import type { MergeConflict } from '../merge/update.js'
import { stages } from '../output/output.js'
import type { Output, StagedPackage, StoredPackage } from '../output/output.js'
import { packageDiff } from '../output/diff.js'
import { ContentPool } from '../package/content-pool.js'
import { gitPackageFiles, samePackageFiles } from '../package/files.js'
import type { PackageFiles } from '../package/files.js'
import { dependencyObjects } from '../package/dependency-objects.js'
import { notReadyReason } from '../package/readiness.js'
import { ResourceCodec } from '../package/resources.js'
import { runPipeline } from '../pipeline/pipeline.js'
import type { PipelineRendered, PipelineRunner } from '../pipeline/pipeline.js'
import { subjectOf } from '../plan/plan.js'
import type { PlannedVariant } from '../plan/plan.js'
import type { MemoEntry, RenderMemo } from './memo.js'
import type { VariantReport } from '../report/report.js'
import { failure, internalError } from '../report/failure.js'
import type { FailureCode } from '../report/failure.js'
import type { RenderSettings } from './settings.js'
import { revisionLabel } from '../upstream/revisions.js'
import type { GitSources } from '../upstream/upstreams.js'
import type { readPackageRecord } from '../package/ownership.js'
import { applyPackageVariant, classifyDownstream, sameRepo } from '../variant/apply.js'
import type { Downstream } from '../variant/apply.js'

/** One rendered variant waiting for the dependency check before it is written. */
export interface Pending {
  report: VariantReport
  path: string
  /** The variant's position in the plan (results are put back in plan order). */
  order: number
  /** The rendered package, staged for the main thread to commit. */
  staged?: StagedPackage
  dependencies: KubeObject[]
  /** The record of this render for the next run (see memo.ts); none when it cannot be skipped next time. */
  memo?: MemoEntry
  /** Failed by its repository's dependency plan, not by its own render (recorded as held: see MemoEntry). */
  dependencyFailure?: true
}

/** Per-run state shared by every variant: caches of prepared revisions and documents. */
export class VariantContext {
  readonly codec = new ResourceCodec()
  /** The files of the packages read and merged this run, one object per distinct content (see ContentPool). */
  readonly #pool = new ContentPool()
  readonly #sources: GitSources
  readonly #prepared = new Map<
    string,
    Promise<{ ok: true; revision: PreparedRevision } | { ok: false; message: string }>
  >()
  readonly #runner: PipelineRunner
  /** New dependency packages rendered this run, by revision, name and mark: the same for every repository they go to. */
  readonly #installs = new Map<string, PackageFiles>()

  constructor(
    private readonly fleet: Fleet,
    sources: GitSources,
    private readonly settings: RenderSettings,
    private readonly output: Output,
    scratch: string,
    private readonly memo?: RenderMemo,
  ) {
    this.#sources = sources
    this.#runner = {
      codec: this.codec,
      sources: fleet.objects,
      kpt: {
        scratch,
        allowExec: settings.allowExec,
        skipImages: settings.imageFunctions === 'skip',
        sources: fleet.root,
        cwd: settings.cwd,
        env: settings.env,
      },
    }
  }

  /** Renders one variant and stages its package; every failure is caught into the report. */
  async render(variant: PlannedVariant): Promise<Pending> {
    const path = `${variant.downstream.repo}/${variant.downstream.package}`
    const pending: Pending = { report: variantReport(variant, path), path, order: 0, dependencies: [] }
    try {
      await this.#renderPending(variant, pending)
    } catch (err) {
      pending.report.status = 'failed'
      pending.report.reasons.push(internalError(err))
      delete pending.memo
    }
    return pending
  }

  /** The phases of `render`: skipped as recorded, or rendered, described, recorded for next time and staged. */
  async #renderPending(variant: PlannedVariant, pending: Pending): Promise<void> {
    const { path, report } = pending
    // A render recorded from the same inputs, whose files are still there untouched (by metadata, else by content), is skipped.
    const recorded = this.memo?.recorded(variant, path)
    if (!recorded?.held && recorded?.stat !== undefined && this.output.statDigest(path) === recorded.stat)
      return skipAsRecorded(pending, recorded)
    // An update merges into the published package; the result is compared with the open draft, if any.
    const stored = await this.output.read(path)
    const current = stored.draft ?? stored.published
    if (recorded && current && this.memo!.sameFiles(recorded, stored)) {
      // The files are those recorded, their metadata not: recorded anew, as read.
      const { stat: _stale, ...entry } = recorded
      return skipAsRecorded(pending, withStatAsRead(entry, stored))
    }
    const final = await this.#renderFiles(variant, report, this.#pooled(stored))
    if (!final) return
    this.#describe(variant, pending, final.files, current)
    // Pipelines kpt ran may read anything: those renders are never skipped.
    if (this.memo && final.ran !== 'kpt') pending.memo = this.#memoEntry(variant, pending, stored, final)
    if (report.status !== 'unchanged') await this.#stage(pending, final.files, { current, held: recorded?.held })
  }

  /** The report's status and readiness, and what the package declares to the dependency check. */
  #describe(variant: PlannedVariant, pending: Pending, files: PackageFiles, current: PackageFiles | undefined): void {
    const { report, path } = pending
    report.status = !current ? 'created' : samePackageFiles(files, current) ? 'unchanged' : 'updated'
    const notReady = notReadyReason(files)
    if (notReady) report.notReady = notReady
    // Changed or not: the repository's plan needs every package. (A dependency's own declarations were the plan's input already.)
    if (!variant.dependency) pending.dependencies = dependencyObjects(this.codec, files, this.output.packageDir(path))
  }

  /** The record of this render for the next run (memo.ts): what the downstream holds after it, and its report. */
  #memoEntry(variant: PlannedVariant, pending: Pending, stored: StoredPackage, final: RenderedFiles): MemoEntry {
    const { report } = pending
    // The package itself, or (--git) the published one and the draft.
    const after: StoredPackage = !this.output.drafts
      ? { published: final.files }
      : report.status === 'unchanged'
        ? stored
        : { ...stored, draft: final.files }
    const recordedReport = {
      ...report,
      warnings: [...report.warnings],
      dependencies: pending.dependencies.map((o) => o.toItemText()),
    }
    const entry = this.memo!.entry(variant, final.ran === 'in-process' ? 'fleet' : 'injectors', after, recordedReport)
    return report.status === 'unchanged' ? withStatAsRead(entry, stored) : entry
  }

  /** Stages a changed package for the commit, or with --dry-run only describes it. */
  async #stage(
    pending: Pending,
    files: PackageFiles,
    options: { current: PackageFiles | undefined; held: boolean | undefined },
  ): Promise<void> {
    if (this.settings.dryRun) {
      if (this.settings.diff) pending.report.diff = packageDiff(pending.path, options.current, files)
    } else if (options.held) {
      // Its repository's dependency plan failed it last time: kept in memory, written only if the plan passes now.
      pending.staged = { files }
    } else pending.staged = stages(this.output) ? await this.output.stage(files) : { files }
  }

  /** The variant's package rendered: its downstream classified, its base made (cloned, as is, or merged), applied and run. */
  async #renderFiles(
    variant: PlannedVariant,
    report: VariantReport,
    stored: StoredPackage,
  ): Promise<RenderedFiles | undefined> {
    const classified = classifyDownstream(variant, stored.published, kptRepoUrl(variant.upstreamRepo.url))
    if (!classified.ok) return fail(report, 'DownstreamNotOwned', classified.message)
    const prepared = await this.#prepare(variant)
    if (!prepared.ok) return fail(report, 'InvalidUpstreamPackage', `upstream ${report.upstream}: ${prepared.message}`)
    report.warnings.push(...prepared.revision.warnings)
    const name = variant.downstream.package.slice(variant.downstream.package.lastIndexOf('/') + 1)
    const downstream = classified.downstream
    const installKey = installKeyOf(variant, downstream, name)
    const installed = installKey === undefined ? undefined : this.#installs.get(installKey)
    if (installed) return { files: installed, ran: undefined }
    const base =
      downstream.kind === 'new'
        ? clonePackage(prepared.revision, name)
        : downstream.kind === 'current'
          ? downstream.files
          : await this.#update(variant, report, downstream, prepared.revision)
    if (!base) return undefined
    const rendered = await this.#applyAndRun(variant, report, base, name)
    if (rendered && installKey !== undefined && rendered.ran === undefined && report.warnings.length === 0)
      this.#installs.set(installKey, rendered.files)
    return rendered
  }

  /** A 3-way merge of the package as it is with the upstream it came from and the new one (as `kpt pkg update`). */
  async #update(
    variant: PlannedVariant,
    report: VariantReport,
    downstream: Extract<Downstream, { kind: 'update' }>,
    revision: PreparedRevision,
  ): Promise<PackageFiles | undefined> {
    const lock = downstream.lock
    report.previousUpstream = lock
      ? `${lock.ref || lock.commit.slice(0, 12)} (${lock.commit.slice(0, 12)})`
      : 'none (adopted without upstreamLock)'
    const origin = lock
      ? await this.#readOrigin(variant, lock)
      : { ok: true as const, files: new Map() as PackageFiles }
    if (!origin.ok) return fail(report, 'UpstreamNotFound', origin.message)
    const updated = await this.#sources.readPackage(
      variant.upstreamRepo.url,
      variant.upstream.commit,
      variant.upstream.directory,
    )
    const upstream = revision.upstream
    const directory = `/${upstream.directory}`
    // Loaded on the first update only: most runs clone or re-render.
    const { updatePackage } = await import('../merge/update.js')
    const merged = updatePackage({
      origin: origin.files,
      updated: gitPackageFiles(updated),
      local: downstream.files,
      onConflict: this.settings.onConflict,
      pool: this.#pool,
      upstream: { repo: upstream.repo, directory, ref: upstream.ref },
      upstreamLock: { repo: upstream.repo, directory, ref: upstream.ref, commit: upstream.commit },
    })
    report.conflicts.push(...merged.conflicts)
    if (!merged.ok) {
      const conflicts = merged.conflicts.map(
        (c: MergeConflict) =>
          `conflict in ${c.file} ${c.resource} ${c.field}: downstream ${c.local ?? '(deleted)'}, upstream ${c.upstream ?? '(deleted)'}`,
      )
      return fail(report, 'MergeConflict', ['3-way merge failed', ...merged.errors, ...conflicts].join('; '))
    }
    report.warnings.push(...merged.warnings)
    return merged.files
  }

  /** The PackageVariant applied to `base`, then the package's pipeline run; undefined when either failed. */
  async #applyAndRun(
    variant: PlannedVariant,
    report: VariantReport,
    base: PackageFiles,
    name: string,
  ): Promise<RenderedFiles | undefined> {
    const applied = applyPackageVariant(variant, base, this.codec, this.fleet.objects)
    collect(report, 'ApplyFailed', applied.results)
    if (applied.injected.length > 0) report.injected = applied.injected
    if (!applied.ok) return undefined
    const dir = this.output.packageDir(`${variant.downstream.repo}/${variant.downstream.package}`)
    const rendered = await runPipeline(applied.files, name, dir, this.#runner)
    collect(report, 'FunctionFailed', rendered.results)
    if (!rendered.ok) return undefined
    return { files: rendered.files, ran: rendered.ran }
  }

  /** The downstream as read, its files pooled: the codec then knows most of them from the variants before. */
  #pooled(stored: StoredPackage): StoredPackage {
    const pooled: StoredPackage = {}
    if (stored.published) pooled.published = this.#pool.files(stored.published)
    if (stored.draft) pooled.draft = this.#pool.files(stored.draft)
    return pooled
  }

  /** The prepared revision of a variant's upstream, read and prepared once per run. */
  #prepare(
    variant: PlannedVariant,
  ): Promise<{ ok: true; revision: PreparedRevision } | { ok: false; message: string }> {
    const { upstream, upstreamRepo } = variant
    const key = revisionKeyOf(variant)
    let prepared = this.#prepared.get(key)
    if (!prepared) {
      prepared = this.#sources.readPackage(upstreamRepo.url, upstream.commit, upstream.directory).then((files) =>
        prepareRevision(
          {
            repo: kptRepoUrl(upstreamRepo.url),
            directory: upstream.directory,
            ref: upstream.ref,
            commit: upstream.commit,
          },
          files,
        ),
      )
      this.#prepared.set(key, prepared)
    }
    return prepared
  }

  /** The old upstream package of an update, from the repository its upstreamLock names. */
  async #readOrigin(
    variant: PlannedVariant,
    lock: NonNullable<ReturnType<typeof readPackageRecord>['lock']>,
  ): Promise<{ ok: true; files: PackageFiles } | { ok: false; message: string }> {
    const url = sameRepo(lock.repo, kptRepoUrl(variant.upstreamRepo.url)) ? variant.upstreamRepo.url : lock.repo
    try {
      return {
        ok: true,
        files: gitPackageFiles(
          await this.#sources.readPackage(url, lock.commit, lock.directory.replace(/^\/+|\/+$/g, '')),
        ),
      }
    } catch (err) {
      return {
        ok: false,
        message: `cannot read the upstream revision the package came from (${lock.repo} ${lock.commit}): ${(err as Error).message}`,
      }
    }
  }
}

/** A rendered package, and who ran its pipeline (none, in-process, kpt). */
interface RenderedFiles {
  files: PackageFiles
  ran: PipelineRendered['ran']
}

/** A variant's report before it is rendered: failed until it is not, with what the plan says of it. */
function variantReport(variant: PlannedVariant, path: string): VariantReport {
  const report: VariantReport = {
    subject: subjectOf(variant),
    path,
    status: 'failed',
    upstream: `${variant.upstream.repository}/${variant.upstream.packageName} ${revisionLabel(variant.upstream)}`,
    reasons: [],
    warnings: [...variant.warnings],
    conflicts: [],
  }
  if (variant.set) report.set = variant.set
  if (variant.version) report.upstreamVersion = variant.version
  if (variant.pv.spec.labels && Object.keys(variant.pv.spec.labels).length > 0)
    report.revisionLabels = { ...variant.pv.spec.labels }
  if (variant.pv.spec.annotations && Object.keys(variant.pv.spec.annotations).length > 0)
    report.revisionAnnotations = { ...variant.pv.spec.annotations }
  const labels = variant.pv.object.labels()
  if (Object.keys(labels).length > 0) report.labels = labels
  return report
}

/** A variant skipped: unchanged, reported as its recorded render was. */
function skipAsRecorded(pending: Pending, entry: MemoEntry): void {
  const { report } = pending
  report.status = 'unchanged'
  report.warnings = [...entry.warnings]
  if (entry.injected) report.injected = [...entry.injected]
  if (entry.notReady) report.notReady = entry.notReady
  pending.dependencies = (entry.dependencies ?? []).map((text, i) => KubeObject.fromItemSource(text, i))
  pending.memo = entry
}

/**
 * The key of a new dependency's package, the same in every repository it is
 * installed in; none where a pipeline may run (it sees its path) or the
 * package is not new.
 */
function installKeyOf(variant: PlannedVariant, downstream: Downstream, name: string): string | undefined {
  const dependency = variant.dependency
  if (!dependency || dependency.configured || downstream.kind !== 'new') return undefined
  return `${revisionKeyOf(variant)}|${name}|${dependency.asDependency}|${dependency.deletionPolicy}`
}

/** Fails the variant with `code`; undefined, for the render that stops there. */
function fail(report: VariantReport, code: FailureCode, message: string): undefined {
  report.reasons.push(failure(code, message))
  return undefined
}

/**
 * The record of a package the run leaves as it read it, with the metadata
 * digest taken as it was read (only a directory's package has one): its
 * digest after the run too, so the run need not walk it again.
 */
function withStatAsRead(entry: MemoEntry, stored: StoredPackage): MemoEntry {
  return stored.stat === undefined ? entry : { ...entry, stat: stored.stat }
}

/** A variant's upstream revision: the ref is part of it, as a tag and a branch at one commit clone to different upstream records. */
function revisionKeyOf(variant: PlannedVariant): string {
  const { upstream, upstreamRepo } = variant
  return `${upstreamRepo.url}|${upstream.ref}|${upstream.commit}|${upstream.directory}`
}

function collect(
  report: VariantReport,
  code: FailureCode,
  results: readonly { severity: string; message: string }[],
): void {
  for (const r of results) {
    if (r.severity === 'error') report.reasons.push(failure(code, r.message))
    else if (r.severity === 'warning') report.warnings.push(r.message)
  }
}
