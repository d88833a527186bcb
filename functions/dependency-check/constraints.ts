/**
 * Version constraints: the Masterminds (Glasskube, Crossplane) and blang
 * (Carvel) syntaxes translated to npm `semver` ranges, never in loose mode
 * (docs/upstream-behaviour.md, "Versions and constraints"), plus Crossplane's digest pins.
 *
 * Translation, per `||` branch:
 * - `""` and `*` mean any version (Glasskube; Crossplane rejects `""`);
 * - commas are AND, like spaces; spaces after an operator are dropped;
 * - `v` prefixes are dropped; `=>` is `>=`, `=<` is `<=`, `==` is `=`, `~>` is `~`;
 * - `!=X` and blang's `!X` split the branch into `<X` and `>X` branches;
 * - anything npm does not accept (strictly) is `improper constraint: <text>`;
 * - shorthands (`~1.2`, `^1`, `1.x`, `>1.2`) take Masterminds' bounds, spelled
 *   out by comparators.ts, so a prerelease below a range's release never
 *   satisfies it.
 *
 * Prerelease policy (Carvel's; docs/upstream-behaviour.md, "Versions and constraints"): ranges are evaluated
 * with `includePrerelease: true`; which prerelease *candidates* may be picked
 * is a separate filter (see `candidateAdmitted`). A branch whose own text names
 * a prerelease (`>=1.0.0-0`) admits prerelease candidates whatever the policy
 * (the Masterminds >= 3.4 group rule).
 */
import semver from 'semver'
import type { PrereleasePolicy } from '../api/dependencies.js'
import { spellOutBranch } from './comparators.js'
import { isDigest, isPrerelease } from './versions.js'
import type { Version } from './versions.js'

/** A parsed constraint. */
export type Constraint =
  | { kind: 'any'; raw: string; display: string }
  | { kind: 'digest'; raw: string; display: string; digest: string }
  | { kind: 'range'; raw: string; display: string; branches: Branch[] }

/** One AND group of a range, compiled. */
export interface Branch {
  /** The npm range text of this branch, as written (shorthands kept). */
  text: string
  /** The branch with Masterminds' bounds spelled out (comparators.ts), tested with `includePrerelease`. */
  range: semver.Range
  /** The branch names a prerelease version itself. */
  namesPrerelease: boolean
}

/** Parse outcome: the constraint, or Crossplane's `improper constraint` message. */
export type ParsedConstraint = { ok: true; constraint: Constraint } | { ok: false; error: string }

const operatorPattern = /(=>|=<|==|~>|>=|<=|!=|>|<|=|~|\^|!)\s+(?=[vV]?[\dxX*])/g
const aliases: Record<string, string> = { '=>': '>=', '=<': '<=', '==': '=', '~>': '~' }
const aliasPattern = /(=>|=<|==|~>)/g
const vPrefixPattern = /(^|[\s<>=~^!])[vV](?=\d)/g
const notPattern = /(?:^|\s)!=?(\S+)/g
const prereleaseName = /\d-[0-9A-Za-z]/
const maxNotComparators = 8

/** Budget: 100,000 constraints, started afresh when full; a plain Map as versions.ts's caches are (slots allocated up front). */
const cache = new Map<string, ParsedConstraint>()

/** Parses a constraint (memoised: catalogs repeat the same few ranges). */
export function parseConstraint(raw: string): ParsedConstraint {
  let hit = cache.get(raw)
  if (!hit) {
    hit = translate(raw)
    if (cache.size > 100_000) cache.clear()
    cache.set(raw, hit)
  }
  return hit
}

/** The npm range branches a constraint translates to (for tests and docs). */
export function translateConstraint(
  raw: string,
): { ok: true; branches: string[]; display: string } | { ok: false; error: string } {
  const parsed = parseConstraint(raw)
  if (!parsed.ok) return parsed
  const c = parsed.constraint
  if (c.kind === 'any') return { ok: true, branches: ['*'], display: c.display }
  if (c.kind === 'digest') return { ok: true, branches: [c.digest], display: c.display }
  return { ok: true, branches: c.branches.map((b) => b.text), display: c.display }
}

function translate(raw: string): ParsedConstraint {
  const text = raw.trim()
  const improper: ParsedConstraint = { ok: false, error: `improper constraint: ${raw}` }
  if (text === '' || text === '*') return { ok: true, constraint: { kind: 'any', raw, display: text } }
  if (isDigest(text)) return { ok: true, constraint: { kind: 'digest', raw, display: text, digest: text } }
  if (text.startsWith('sha256:') || text.startsWith('sha512:') || text.startsWith('sha384:')) return improper
  const parts = text.split('||').map(normalisePart)
  if (parts.some((p) => p === '')) return improper
  const branches: Branch[] = []
  for (const part of parts) {
    const nots: string[] = []
    const rest = part
      .replace(notPattern, (_m, version: string) => {
        nots.push(version)
        return ' '
      })
      .replace(/\s+/g, ' ')
      .trim()
    if (nots.length > maxNotComparators) return improper
    for (const alternative of distribute(rest, nots)) {
      if (semver.validRange(alternative) === null) return improper
      branches.push({
        text: alternative,
        range: new semver.Range(spellOutBranch(alternative), { includePrerelease: true }),
        namesPrerelease: prereleaseName.test(alternative),
      })
    }
  }
  return { ok: true, constraint: { kind: 'range', raw, display: parts.join(' || '), branches } }
}

/** Masterminds/blang spelling → npm spelling, for one `||` part. */
function normalisePart(part: string): string {
  return part
    .replace(/,/g, ' ')
    .replace(operatorPattern, '$1')
    .replace(aliasPattern, (op) => aliases[op] ?? op)
    .replace(vPrefixPattern, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}

/** `A !=X !=Y` → `A <X <Y`, `A <X >Y`, `A >X <Y`, `A >X >Y` (only satisfiable ones matter). */
function distribute(rest: string, nots: readonly string[]): string[] {
  let out = [rest]
  for (const version of nots) {
    out = out.flatMap((base) => [`${base} <${version}`.trim(), `${base} >${version}`.trim()])
  }
  return out
}

/**
 * True when the version satisfies the constraint. Build metadata is ignored
 * (as in npm and Masterminds); digests compare by text; a digest or opaque
 * version satisfies only `any` and an equal digest.
 */
export function satisfies(version: Version, c: Constraint): boolean {
  if (c.kind === 'any') return true
  if (c.kind === 'digest') return version.raw.trim() === c.digest
  if (!version.semver) return false
  // Parsed constraints and versions are shared objects, so a planner asks the same question often.
  let memo = satisfiesMemo.get(c)
  if (!memo) {
    memo = new WeakMap()
    satisfiesMemo.set(c, memo)
  }
  const hit = memo.get(version)
  if (hit !== undefined) return hit
  let ok = false
  for (const branch of c.branches) {
    if (branch.range.test(version.semver)) {
      ok = true
      break
    }
  }
  memo.set(version, ok)
  return ok
}

const satisfiesMemo = new WeakMap<Constraint, WeakMap<Version, boolean>>()

/** True when some branch that satisfies the version names a prerelease itself. */
export function admitsPrereleaseExplicitly(version: Version, c: Constraint): boolean {
  if (c.kind !== 'range' || !version.semver) return false
  return c.branches.some((b) => b.namesPrerelease && b.range.test(version.semver!))
}

/**
 * True when a prerelease candidate may be picked: `Include`; an identifier
 * listed in `{identifiers}` (Carvel); or a constraint on the package naming a
 * prerelease that the candidate satisfies. Releases are always admitted.
 */
export function candidateAdmitted(
  version: Version,
  policy: PrereleasePolicy,
  constraints: readonly Constraint[],
): boolean {
  if (!isPrerelease(version)) return true
  if (policy === 'Include') return true
  if (typeof policy === 'object') {
    const ids = version.semver!.prerelease.map(String)
    if (policy.identifiers.some((id) => ids.includes(id))) return true
  }
  return constraints.some((c) => admitsPrereleaseExplicitly(version, c))
}

/**
 * Where a version lies relative to a constraint: `Above` (npm `gtr`),
 * `Below` (`ltr`), `Gap` (between OR branches), `Digest` (digest mismatch).
 */
export function direction(version: Version, c: Constraint): 'Above' | 'Below' | 'Gap' | 'Digest' {
  if (c.kind === 'digest' || !version.semver) return 'Digest'
  if (c.kind === 'any') return 'Gap'
  const ranges = c.branches.map((b) => b.range)
  const v = version.semver
  if (ranges.every((r) => semver.gtr(v, r, { includePrerelease: true }))) return 'Above'
  if (ranges.every((r) => semver.ltr(v, r, { includePrerelease: true }))) return 'Below'
  return 'Gap'
}
