/**
 * Package versions: parsing (semver, `v` prefix kept in `raw`), the
 * incomplete-version policy (`v1`, `1.2`), digests, and a total order with a
 * build-metadata tiebreak (docs/upstream-behaviour.md, "Versions and constraints").
 */
import semver from 'semver'
import type { SemVer } from 'semver'

/** A parsed version; `raw` is printed in outputs, so `v` and `+N` survive. */
export interface Version {
  raw: string
  /** Undefined for digests and opaque strings. */
  semver?: SemVer
  /** A `sha256:…` (or sha384/sha512) digest, Crossplane style. */
  digest?: string
  /** True when `raw` was incomplete (`v1`, `1.2`) and coerced. */
  coerced: boolean
}

/** The options every range test uses (constraints.ts); versions carry the same. */
export const semverOptions: semver.RangeOptions = { includePrerelease: true }

const digestPattern = /^(sha256:[0-9a-f]{64}|sha384:[0-9a-f]{96}|sha512:[0-9a-f]{128})$/
const incompletePattern = /^v?\d+(\.\d+)?$/

/** True for an OCI-style content digest. */
export function isDigest(text: string): boolean {
  return digestPattern.test(text)
}

/**
 * Parses a version. Full semver (optionally `v`-prefixed) always parses;
 * `v1` / `1.2` parse only with `coerce` (Masterminds `NewVersion` accepts them,
 * Crossplane drops them when selecting); digests parse as digests.
 */
export function parseVersion(raw: string, options: { coerce: boolean }): Version | undefined {
  const cache = options.coerce ? coercedCache : strictCache
  const hit = cache.get(raw)
  if (hit !== undefined || cache.has(raw)) return hit
  const parsed = parseUncached(raw, options)
  if (cache.size > 100_000) cache.clear()
  cache.set(raw, parsed)
  return parsed
}

/**
 * Parsed versions are shared (never mutated): catalogs repeat the same strings. One cache per option, so the key
 * is the string itself. Budget: 100,000 versions each, started afresh when full. Plain Maps, not lru-cache: they
 * hold `undefined` (not a version), which lru-cache does not store, and lru-cache allocates all its slots when
 * made, which every dependency-check process would pay at start.
 */
const coercedCache = new Map<string, Version | undefined>()
const strictCache = new Map<string, Version | undefined>()

function parseUncached(raw: string, options: { coerce: boolean }): Version | undefined {
  const text = raw.trim()
  if (isDigest(text)) return { raw, digest: text, coerced: false }
  // Parsed with the options ranges are tested with, so semver reuses the object instead of re-parsing.
  const parsed = semver.parse(text, semverOptions)
  if (parsed) return { raw, semver: parsed, coerced: false }
  if (options.coerce && incompletePattern.test(text)) {
    const coerced = semver.coerce(text, semverOptions)
    if (coerced) return { raw, semver: coerced, coerced: true }
  }
  return undefined
}

/** True when the version has a prerelease part. */
export function isPrerelease(v: Version): boolean {
  return (v.semver?.prerelease.length ?? 0) > 0
}

/**
 * Orders versions: semver precedence, then build metadata (`compareBuild`:
 * numeric identifiers numerically, `1.0.0 < 1.0.0+1 < 1.0.0+2 < 1.0.0+a`),
 * then the raw text, so the order is total and independent of input order.
 * Digests and opaque strings sort before every semver version, by text.
 */
export function compareVersions(a: Version, b: Version): number {
  if (a.semver && b.semver) {
    // SemVer#compareBuild compares build identifiers only; precedence comes first.
    const c = a.semver.compare(b.semver) || a.semver.compareBuild(b.semver)
    if (c !== 0) return c
  } else if (a.semver) return 1
  else if (b.semver) return -1
  return a.raw < b.raw ? -1 : a.raw > b.raw ? 1 : 0
}

/**
 * True when moving an installation from `from` to `to` (another version) is an
 * upgrade: up the semver order, or to or from a digest, which has no order
 * (Crossplane moves a dependency to the digest its dependants pin under its
 * upgrade flag, never its downgrade flag).
 */
export function isUpgrade(from: Version, to: Version): boolean {
  return !from.semver || !to.semver || compareVersions(to, from) > 0
}

/** True when the two denote the same release, build metadata included (`v1.2.3` = `1.2.3`). */
export function sameVersion(a: Version, b: Version): boolean {
  if (a.semver && b.semver) return a.semver.compare(b.semver) === 0 && a.semver.compareBuild(b.semver) === 0
  return a.raw.trim() === b.raw.trim()
}

/** A key equal for versions that `sameVersion` considers equal. */
export function versionKey(v: Version): string {
  if (!v.semver) return v.raw.trim()
  const build = v.semver.build.length > 0 ? `+${v.semver.build.join('.')}` : ''
  return `${v.semver.version}${build}`
}

/** Sorts ascending with `compareVersions` (a copy). */
export function sortVersions<T extends Version>(versions: readonly T[]): T[] {
  return [...versions].sort(compareVersions)
}
