/**
 * Masterminds' shorthand comparators (`~1.2`, `^1`, `1.2.x`, `>1.2`, `1.2 - 1.4`)
 * spelled out as plain bounds on full versions (`>=1.2.0 <1.3.0-0`), which npm
 * `semver` then tests by precedence with `includePrerelease`.
 *
 * npm's own desugaring cannot be used for this: with `includePrerelease` it
 * starts every partial version's range at its lowest prerelease (`~1.2` is
 * `>=1.2.0-0`), so `~1.2`, `1.2.x`, `^1` and `1.x` would accept `1.2.0-rc.1` or
 * `1.0.0-rc.1`, below the range. Masterminds (and blang) start them at the
 * release. The bounds, per Masterminds' `constraints.go` (con = the version
 * with its missing parts zero, M.m.p):
 * - `~X`, `=X.x`, `X.x`: `>=con`, then below the next minor (`~1.2`, `~1.2.3`) or
 *   major (`~1`, `~1.x`); `~0.0.0` is any version from 0.0.0 on (Masterminds'
 *   special case);
 * - `^X`: `>=con`, below the next major; for 0.y below the next minor, for
 *   0.0.z below the next patch (`^0.0` and `^0` widen like `~`);
 * - `>X`: above the whole partial line (`>1.2` is `>=1.3.0-0`); `>=X`: `>=con`;
 * - `<=X`: up to the end of the partial line (`<=1.2` is `<1.3.0-0`);
 * - `<X` with a partial X: below the line's first prerelease (`<2` is
 *   `<2.0.0-0`), as npm reads it; Masterminds reads `<2` as `<2.0.0`, which
 *   admits `2.0.0-rc.1` once prereleases are allowed (a documented difference);
 * - `A - B`: `>=A <=B`.
 * A wildcard major (`*`, `x`, `>=*`) keeps npm's reading: Masterminds' own is
 * inconsistent there (`^*` accepts only 0.0.0).
 */
import semver from 'semver'

const part = '(0|[1-9]\\d*|[xX*])'
const comparatorPattern = new RegExp(
  `^(<=|>=|<|>|=|~|\\^)?${part}(?:\\.${part}(?:\\.${part})?)?(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$`,
)

/** The plain bounds of one AND group of npm-spelled comparators (the text after normalisation). */
export function spellOutBranch(text: string): string {
  const tokens = text.split(' ').filter(Boolean)
  const out: string[] = []
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i + 1] === '-' && tokens[i + 2] !== undefined) {
      out.push(spellOut(`>=${tokens[i]!}`), spellOut(`<=${tokens[i + 2]!}`))
      i += 2
    } else {
      out.push(spellOut(tokens[i]!))
    }
  }
  return out.filter(Boolean).join(' ')
}

/** One comparator as plain bounds ('' for any version). */
function spellOut(comparator: string): string {
  const m = comparatorPattern.exec(comparator)
  const isX = (s: string | undefined) => s === undefined || s === 'x' || s === 'X' || s === '*'
  if (!m || isX(m[2])) return npmReading(comparator)
  const op = m[1] ?? '='
  const major = Number(m[2])
  const minorDirty = isX(m[3])
  const patchDirty = !minorDirty && isX(m[4])
  const minor = minorDirty ? 0 : Number(m[3])
  const patch = minorDirty || patchDirty ? 0 : Number(m[4])
  const con = `${major}.${minor}.${patch}${m[5] ?? ''}${m[6] ?? ''}`
  const dirty = minorDirty || patchDirty
  const nextMajor = `${major + 1}.0.0-0`
  const nextMinor = `${major}.${minor + 1}.0-0`
  switch (op) {
    case '=':
      return dirty ? tilde(con, major, minor, patch, minorDirty, patchDirty) : `=${con}`
    case '~':
      return tilde(con, major, minor, patch, minorDirty, patchDirty)
    case '^':
      if (major > 0 || minorDirty) return `>=${con} <${nextMajor}`
      if (minor > 0 || patchDirty) return `>=${con} <${nextMinor}`
      return `>=${con} <0.0.${patch + 1}-0`
    case '>':
      if (minorDirty) return `>=${nextMajor}`
      if (patchDirty) return `>=${nextMinor}`
      return `>${con}`
    case '>=':
      return `>=${con}`
    case '<=':
      if (minorDirty) return `<${nextMajor}`
      if (patchDirty) return `<${nextMinor}`
      return `<=${con}`
    default: // '<'
      return dirty ? `<${major}.${minor}.0-0` : `<${con}`
  }
}

function tilde(
  con: string,
  major: number,
  minor: number,
  patch: number,
  minorDirty: boolean,
  patchDirty: boolean,
): string {
  if (major === 0 && minor === 0 && patch === 0 && !minorDirty && !patchDirty) return `>=${con}`
  return minorDirty ? `>=${con} <${major + 1}.0.0-0` : `>=${con} <${major}.${minor + 1}.0-0`
}

/** npm's own bounds for a comparator outside the grammar above (a wildcard major). */
function npmReading(comparator: string): string {
  return new semver.Range(comparator, { includePrerelease: true }).range
}
