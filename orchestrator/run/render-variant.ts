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
    const pending: Pending = { report, path, order: 0, dependencies: [] }
    try {
      const skip = (entry: MemoEntry) => {
        report.status = 'unchanged'
        report.warnings = [...entry.warnings]
        if (entry.injected) report.injected = [...entry.injected]
        if (entry.notReady) report.notReady = entry.notReady
        pending.dependencies = (entry.dependencies ?? []).map((text, i) => KubeObject.fromItemSource(text, i))
        pending.memo = entry
        return pending
      }
      // A render recorded from the same inputs, whose files are still there untouched (by metadata, else by content), is skipped.
      const recorded = this.memo?.recorded(variant, path)
      if (!recorded?.held && recorded?.stat !== undefined && this.output.statDigest(path) === recorded.stat)
        return skip(recorded)
      // An update merges into the published package; the result is compared with the open draft, if any.
      const stored = await this.output.read(path)
      const current = stored.draft ?? stored.published
      if (recorded && current && this.memo!.sameFiles(recorded, stored)) {
        const { stat: _stale, ...entry } = recorded
        return skip(entry)
      }
      const final = await this.#renderFiles(variant, report, stored)
      if (!final) return pending
      const { files, ran } = final
      report.status = !current ? 'created' : samePackageFiles(files, current) ? 'unchanged' : 'updated'
      const notReady = notReadyReason(files)
      if (notReady) report.notReady = notReady
      // What the package declares to the dependency check, changed or not: the repository's plan needs every package.
      // (A dependency's own declarations were the plan's input already.)
      if (!variant.dependency) pending.dependencies = dependencyObjects(this.codec, files, this.output.packageDir(path))
      // Pipelines kpt ran may read anything: those renders are never skipped.
      if (this.memo && ran !== 'kpt') {
        // What the downstream holds after this run: the package itself, or (--git) the published one and the draft.
        const after: StoredPackage = !this.output.drafts
          ? { published: files }
          : report.status === 'unchanged'
            ? stored
            : { ...stored, draft: files }
        const recordedReport = {
          ...report,
          warnings: [...report.warnings],
          dependencies: pending.dependencies.map((o) => o.toItemText()),
        }
        pending.memo = this.memo.entry(variant, ran === 'in-process' ? 'fleet' : 'injectors', after, recordedReport)
      }
      if (report.status === 'unchanged') return pending
      if (this.settings.dryRun) {
        if (this.settings.diff) report.diff = packageDiff(path, current, files)
      } else if (recorded?.held) {
        // Its repository's dependency plan failed it last time: kept in memory, written only if the plan passes now.
        pending.staged = { files }
      } else pending.staged = stages(this.output) ? await this.output.stage(files) : { files }
    } catch (err) {
      report.status = 'failed'
      report.reasons.push(internalError(err))
      delete pending.memo
    }
    return pending
  }

  async #renderFiles(
    variant: PlannedVariant,
    report: VariantReport,
    stored: StoredPackage,
  ): Promise<{ files: PackageFiles; ran: PipelineRendered['ran'] } | undefined> {
    const fail = (code: FailureCode, message: string) => {
      report.reasons.push(failure(code, message))
      return undefined
    }
    const dir = this.output.packageDir(`${variant.downstream.repo}/${variant.downstream.package}`)
    const classified = classifyDownstream(variant, stored.published, kptRepoUrl(variant.upstreamRepo.url))
    if (!classified.ok) return fail('DownstreamNotOwned', classified.message)
    const prepared = await this.#prepare(variant)
    if (!prepared.ok) return fail('InvalidUpstreamPackage', `upstream ${report.upstream}: ${prepared.message}`)
    report.warnings.push(...prepared.revision.warnings)
    const name = variant.downstream.package.slice(variant.downstream.package.lastIndexOf('/') + 1)
    const downstream = classified.downstream
    // A dependency installed in many repositories is the same package in each, unless a pipeline runs (it sees its path).
    const installKey =
      variant.dependency && !variant.dependency.configured && downstream.kind === 'new'
        ? `${revisionKeyOf(variant)}|${name}|${variant.dependency.asDependency}|${variant.dependency.deletionPolicy}`
        : undefined
    const installed = installKey === undefined ? undefined : this.#installs.get(installKey)
    if (installed) return { files: installed, ran: undefined }
    let base: PackageFiles
    if (downstream.kind === 'new') base = clonePackage(prepared.revision, name)
    else if (downstream.kind === 'current') base = downstream.files
    else {
      const lock = downstream.lock
      report.previousUpstream = lock
        ? `${lock.ref || lock.commit.slice(0, 12)} (${lock.commit.slice(0, 12)})`
        : 'none (adopted without upstreamLock)'
      const origin = lock
        ? await this.#readOrigin(variant, lock)
        : { ok: true as const, files: new Map() as PackageFiles }
      if (!origin.ok) return fail('UpstreamNotFound', origin.message)
      const updated = await this.#sources.readPackage(
        variant.upstreamRepo.url,
        variant.upstream.commit,
        variant.upstream.directory,
      )
      const upstream = prepared.revision.upstream
      const directory = `/${upstream.directory}`
      // Loaded on the first update only: most runs clone or re-render.
      const { updatePackage } = await import('../merge/update.js')
      const merged = updatePackage({
        origin: origin.files,
        updated: gitPackageFiles(updated),
        local: downstream.files,
        onConflict: this.settings.onConflict,
        upstream: { repo: upstream.repo, directory, ref: upstream.ref },
        upstreamLock: { repo: upstream.repo, directory, ref: upstream.ref, commit: upstream.commit },
      })
      report.conflicts.push(...merged.conflicts)
      if (!merged.ok) {
        const conflicts = merged.conflicts.map(
          (c: MergeConflict) =>
            `conflict in ${c.file} ${c.resource} ${c.field}: downstream ${c.local ?? '(deleted)'}, upstream ${c.upstream ?? '(deleted)'}`,
        )
        return fail('MergeConflict', ['3-way merge failed', ...merged.errors, ...conflicts].join('; '))
      }
      report.warnings.push(...merged.warnings)
      base = merged.files
    }
    const applied = applyPackageVariant(variant, base, this.codec, this.fleet.objects)
    collect(report, 'ApplyFailed', applied.results)
    if (applied.injected.length > 0) report.injected = applied.injected
    if (!applied.ok) return undefined
    const rendered = await runPipeline(applied.files, name, dir, this.#runner)
    collect(report, 'FunctionFailed', rendered.results)
    if (!rendered.ok) return undefined
    if (installKey !== undefined && rendered.ran === undefined && report.warnings.length === 0)
      this.#installs.set(installKey, rendered.files)
    return { files: rendered.files, ran: rendered.ran }
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
