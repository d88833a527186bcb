/**
 * The record of earlier renders, which lets a re-render skip variants whose
 * inputs have not changed, as make or git's index skip unchanged files.
 *
 * Rendering is idempotent: applying a PackageVariant to the package it
 * produced gives that package back. So once a variant has been rendered to
 * some files, a later render whose inputs are the same and whose downstream
 * still holds exactly those files must report it unchanged, and the render
 * itself can be skipped. An entry holds a digest of both: the inputs (the
 * code, the PackageVariant, the upstream commit, the settings, the objects
 * injection can read, or the whole fleet when the Kptfile pipeline ran our
 * functions over it) and the files (paths, modes, bytes). Anything else
 * invalidates it: a downstream edit, a new commit, another injected object.
 * Variants whose pipeline ran in kpt (functions that are not ours) are never
 * recorded: what those functions read is not known. `--force` skips
 * nothing, and records what it rendered (`kpt-variants status` tells local
 * edits by the record).
 *
 * With `--out`, reading every file of every package to check it is most of
 * an unchanged re-render, so an entry also keeps a digest of the files'
 * metadata (path, size, modification and change times, inode, mode), as git's index
 * does: when that matches, the contents are not read. As in git, metadata
 * taken within two seconds of a file's modification is not trusted (an edit
 * in the same clock tick would not show): such entries are checked by
 * content, and get their metadata digest on a later run. With `--git` that
 * digest is the ids of the package's trees, published and drafted
 * (`packageDigests`): content-addressed, so trusted at once.
 */
import { fastPath } from '../../functions/krm/fast-paths.js'
import { createHash } from 'node:crypto'
import type { KubeObject } from '../../functions/krm/index.js'
import { codeIdentity } from '../cache/identity.js'
import { readRecord, writeRecord } from '../cache/record.js'
import type { RecordFormat } from '../cache/record.js'
import type { StoredPackage } from '../output/output.js'
import { appendTo } from '../util/collections.js'
import type { PlannedVariant } from '../plan/plan.js'

/** What the inputs of a recorded render included besides the PackageVariant and its upstream. */
export type MemoScope = 'injectors' | 'fleet'

/** One recorded render of a variant. */
export interface MemoEntry {
  scope: MemoScope
  /** Digest of the inputs. */
  inputs: string
  /** Digest of the files the render left in the downstream (and, with --git, the published package). */
  files: string
  /** Digest of those files' metadata when taken long enough after they were written (--out), or of their trees (--git). */
  stat?: string
  /** The report's warnings and injected objects, repeated when the render is skipped. */
  warnings: string[]
  injected?: string[]
  /** Why its package is not ready (unmet readiness gates), repeated when the render is skipped. */
  notReady?: string
  /** What the package declares to the dependency check (its PackageManifests and CRDs, as item text), for the repository's plan. */
  dependencies?: string[]
  /**
   * The render succeeded but its repository's dependency plan failed it, so
   * nothing was written: the next render from the same inputs keeps its
   * package in memory until the plan passes, and writes nothing when it
   * fails again. Such an entry is never skipped.
   */
  held?: true
}

/** The record file: entries by downstream path (`<repo>/<package>`). */
interface MemoFile {
  entries: Record<string, MemoEntry>
}

const memoFormat: RecordFormat<MemoFile> = {
  version: 2,
  holds: (record) => typeof record.entries === 'object' && record.entries !== null,
}

/** The settings of a run that change what a variant renders to. */
export interface MemoSettings {
  namespace?: string
  imageFunctions?: string
  allowExec: boolean
  onConflict: string
}

/** The record of one output (a directory or a set of repositories), read at the start of a run. */
export class RenderMemo {
  readonly #entries: Map<string, MemoEntry>
  #byName: Map<string, KubeObject[]> | undefined
  /** Input digests by variant and scope: a render looks its variant up, then records it. */
  readonly #inputDigests = new WeakMap<PlannedVariant, Partial<Record<MemoScope, string>>>()

  private constructor(
    readonly file: string,
    entries: Record<string, MemoEntry>,
    private readonly fleetDigest: string,
    private readonly objects: readonly KubeObject[],
    private readonly settings: MemoSettings,
    private readonly forced: boolean,
  ) {
    this.#entries = new Map(Object.entries(entries))
  }

  /** Reads the record's entries, by package path (a missing or unreadable record has none: it only costs a full render). */
  static read(file: string): Record<string, MemoEntry> {
    return readRecord(file, memoFormat)?.entries ?? {}
  }

  /** The record of `file` for this fleet and these settings; `entries` as `read` gives them; `forced` (`--force`): it answers nothing, and is only written. */
  static open(
    file: string,
    fleet: { digest: string; objects: readonly KubeObject[] },
    settings: MemoSettings,
    entries = RenderMemo.read(file),
    forced = false,
  ): RenderMemo {
    // Without the fast path it answers nothing, as with --force: every variant is rendered and compared.
    return new RenderMemo(file, entries, fleet.digest, fleet.objects, settings, forced || !fastPath('memo'))
  }

  /** The recorded render at `path` if `variant`'s inputs are those it was made from. */
  recorded(variant: PlannedVariant, path: string): MemoEntry | undefined {
    if (this.forced) return undefined
    const entry = this.#entries.get(path)
    return entry && entry.inputs === this.#inputs(variant, entry.scope) ? entry : undefined
  }

  /** True when the downstream holds exactly what the recorded render left there. */
  sameFiles(entry: MemoEntry, stored: StoredPackage): boolean {
    return !entry.held && entry.files === filesDigest(stored)
  }

  /** The entry to record for a render of `variant` that left `stored` in its downstream (a draft, with --git). */
  entry(
    variant: PlannedVariant,
    scope: MemoScope,
    stored: StoredPackage,
    report: { warnings: string[]; injected?: string[]; notReady?: string; dependencies?: string[] },
  ): MemoEntry {
    const entry: MemoEntry = {
      scope,
      inputs: this.#inputs(variant, scope),
      files: filesDigest(stored),
      warnings: report.warnings,
    }
    if (report.injected) entry.injected = report.injected
    if (report.notReady) entry.notReady = report.notReady
    if (report.dependencies && report.dependencies.length > 0) entry.dependencies = report.dependencies
    return entry
  }

  /**
   * Writes the record with this run's entries: `rendered` replaces (or, with
   * no entry, removes) the entry of every path the run rendered; entries of
   * other paths (another shard's) stay. Written whole and renamed into place.
   */
  save(rendered: ReadonlyMap<string, MemoEntry | undefined>): void {
    for (const [path, entry] of rendered) {
      if (entry) this.#entries.set(path, entry)
      else this.#entries.delete(path)
    }
    writeRecord(this.file, memoFormat, {
      entries: Object.fromEntries([...this.#entries].sort(([a], [b]) => (a < b ? -1 : 1))),
    })
  }

  /**
   * The objects config injection can read for a variant: those of its
   * namespace named by one of its injectors (Porch injects by name).
   */
  #injectable(variant: PlannedVariant): string[] {
    if (!this.#byName) {
      this.#byName = new Map()
      for (const o of this.objects) {
        const key = `${o.namespace}/${o.name}`
        appendTo(this.#byName, key, o)
      }
    }
    const names = [...new Set((variant.pv.spec.injectors ?? []).map((i) => i.name))].sort()
    return names.flatMap((name) => (this.#byName!.get(`${variant.pv.namespace}/${name}`) ?? []).map(objectText))
  }

  #inputs(variant: PlannedVariant, scope: MemoScope): string {
    let digests = this.#inputDigests.get(variant)
    if (!digests) this.#inputDigests.set(variant, (digests = {}))
    return (digests[scope] ??= this.#inputsDigest(variant, scope))
  }

  #inputsDigest(variant: PlannedVariant, scope: MemoScope): string {
    const { upstream, upstreamRepo } = variant
    return createHash('sha256')
      .update(
        JSON.stringify([
          codeIdentity(),
          this.settings,
          variant.key,
          variant.set ?? '',
          variant.warnings,
          variant.pv.object.toItemText(),
          [upstreamRepo.url, upstream.commit, upstream.ref, upstream.directory],
          scope === 'fleet' ? this.fleetDigest : this.#injectable(variant),
        ]),
      )
      .digest('hex')
  }
}

/** Digest of a downstream's files; with --git the published package counts too (a draft is rebased when the branch moves under it). */
export function filesDigest(stored: StoredPackage): string {
  const hash = createHash('sha256')
  for (const [part, files] of [
    ['published', stored.published],
    ['draft', stored.draft],
  ] as const) {
    hash.update(`\0${part}:${files ? files.size : 'none'}`)
    for (const [path, file] of files ?? []) {
      hash.update(`\0${path}\0${file.executable ? 'x' : '-'}${file.content.length}\0`)
      hash.update(file.content)
    }
  }
  return hash.digest('hex')
}

/** Fleet objects as text, printed once each. */
const objectTexts = new WeakMap<KubeObject, string>()

function objectText(object: KubeObject): string {
  let text = objectTexts.get(object)
  if (text === undefined) objectTexts.set(object, (text = object.toItemText()))
  return text
}
