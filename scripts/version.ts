/**
 * The one version: package.json's. The programs get it from the build (scripts/bundle.ts), the images
 * their tags and labels from scripts/images.ts; what is written elsewhere, in text a build cannot
 * reach (deploy/'s image references, the docs' commands, metadata.yaml's links, the lockfile), is
 * found here, checked (test/version.test.ts: any disagreement fails it) and set by `npm run release`.
 *
 *   node dist/scripts/version.js             # lists every place and the version it says; exit 1 on a disagreement
 *   node dist/scripts/version.js --set 0.2.0 # package.json, the lockfile and every place
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defaultRegistry, imageTargets, packageVersion, sourceUrl } from './image-names.js'

/** A semantic version (https://semver.org), without a leading `v`. */
export const semverPattern = String.raw`(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?`

/** One mention of a version outside package.json. */
export interface VersionMention {
  file: string
  line: number
  /** The text that says it, e.g. `ghcr.io/kpt-variants/kpt-variants:v0.1.0`. */
  text: string
  version: string
  /** An image tag without the catalog's `v` (`:0.1.0`): wrong whatever the version. */
  unprefixed?: boolean
}

/**
 * What says a version of ours in text: an image of ours with its tag (the catalog's `:vX.Y.Z`, or the
 * `kpt-variants/<name>:X.Y.Z` of earlier builds, which must not linger), the npm tarball, links
 * to the sources at a release's tag, and `kpt pkg get` of a package of the repository at one. Each
 * has the version as its first group.
 */
function mentionPatterns(root: string): RegExp[] {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const names = imageTargets.map(escape).join('|')
  const registries = [escape(defaultRegistry), '(?<![\\w.-])kpt-variants'].join('|')
  return [
    new RegExp(`(?:${registries})/(?:${names}):v?(${semverPattern})`, 'g'),
    new RegExp(`kpt-variants-(${semverPattern})\\.tgz`, 'g'),
    new RegExp(`${escape(sourceUrl(root))}/(?:tree|blob)/v(${semverPattern})/`, 'g'),
    new RegExp(`${escape(sourceUrl(root))}\\.git/[\\w/-]+@v(${semverPattern})(?![\\w.-])`, 'g'),
  ]
}

/**
 * The files that may mention a version: the repository's text files that are not code (the docs,
 * deploy/'s manifests, metadata.yaml, the Dockerfile), tracked or about to be. Two are records of
 * the past: CHANGELOG.md names every release (its newest is checked apart, by changelogVersion), and
 * bench/RESULTS.md the images a benchmark run measured.
 */
const history = ['CHANGELOG.md', 'bench/RESULTS.md']

function candidateFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  })
  return [...new Set(listed.split('\0'))]
    .filter((file) => /(\.md|\.ya?ml|^Dockerfile)$/.test(file) && !history.includes(file))
    .filter((file) => !/(^|\/)node_modules\//.test(file))
    .sort()
}

/** Every mention of a version of ours outside package.json, the lockfile's included. */
export function versionMentions(root: string): VersionMention[] {
  const mentions: VersionMention[] = []
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    version?: string
    packages?: Record<string, { version?: string }>
  }
  mentions.push({ file: 'package-lock.json', line: 0, text: '"version"', version: lock.version ?? '(none)' })
  mentions.push({
    file: 'package-lock.json',
    line: 0,
    text: 'packages[""].version',
    version: lock.packages?.['']?.version ?? '(none)',
  })
  const patterns = mentionPatterns(root)
  for (const file of candidateFiles(root)) {
    let text: string
    try {
      text = readFileSync(join(root, file), 'utf8')
    } catch {
      continue // listed but deleted from the work tree
    }
    const lines = text.split('\n')
    lines.forEach((content, i) => {
      for (const pattern of patterns)
        for (const match of content.matchAll(pattern))
          mentions.push({
            file,
            line: i + 1,
            text: match[0],
            version: match[1]!,
            ...(match[0].endsWith(`:${match[1]!}`) ? { unprefixed: true } : {}),
          })
    })
  }
  const changelog = changelogVersion(root)
  if (changelog)
    mentions.push({ file: 'CHANGELOG.md', line: changelog.line, text: changelog.text, version: changelog.version })
  return mentions
}

/** The newest release CHANGELOG.md lists (`## [X.Y.Z] - date`), if it lists one. */
export function changelogVersion(root: string): { version: string; line: number; text: string } | undefined {
  let text: string
  try {
    text = readFileSync(join(root, 'CHANGELOG.md'), 'utf8')
  } catch {
    return undefined
  }
  const lines = text.split('\n')
  const pattern = new RegExp(`^## \\[(${semverPattern})\\]`)
  for (const [i, line] of lines.entries()) {
    const match = pattern.exec(line)
    if (match) return { version: match[1]!, line: i + 1, text: line }
  }
  return undefined
}

/** The mentions that disagree with package.json (or tag an image without the `v`). */
export function disagreements(root: string): VersionMention[] {
  const version = packageVersion(root)
  return versionMentions(root).filter((mention) => mention.version !== version || mention.unprefixed)
}

/** Sets `version` in package.json, the lockfile and every mention (CHANGELOG.md is the release's to change). */
export function setVersion(root: string, version: string): void {
  if (!new RegExp(`^${semverPattern}$`).test(version)) throw new Error(`${version} is not a semantic version X.Y.Z`)
  const files = new Set(versionMentions(root).map((mention) => mention.file))
  for (const file of ['package.json', 'package-lock.json']) {
    const path = join(root, file)
    const json = JSON.parse(readFileSync(path, 'utf8')) as {
      version: string
      packages?: Record<string, { version?: string }>
    }
    json.version = version
    const own = json.packages?.['']
    if (own) own.version = version
    writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`)
  }
  const patterns = mentionPatterns(root)
  for (const file of files) {
    if (file === 'package-lock.json' || file === 'CHANGELOG.md') continue
    const path = join(root, file)
    const before = readFileSync(path, 'utf8')
    let after = before
    for (const pattern of patterns)
      after = after.replace(pattern, (match: string, found: string) => {
        // Every pattern ends with the version (and `.tgz` or `/`); an image tag gets the catalog's `v`.
        const at = match.lastIndexOf(found)
        const prefix = match.slice(0, at)
        return `${prefix.endsWith(':') ? `${prefix}v` : prefix}${version}${match.slice(at + found.length)}`
      })
    if (after !== before) writeFileSync(path, after)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')
  const set = process.argv.indexOf('--set')
  if (set >= 0) {
    const version = process.argv[set + 1]
    if (!version) throw new Error('--set needs a version')
    setVersion(root, version)
  }
  const version = packageVersion(root)
  let bad = 0
  for (const mention of versionMentions(root)) {
    const agrees = mention.version === version && !mention.unprefixed
    if (!agrees) bad++
    console.log(`${agrees ? 'ok  ' : 'BAD '} ${mention.file}:${mention.line}  ${mention.text}`)
  }
  console.log(
    bad === 0 ? `every place says ${version}` : `${bad} place(s) disagree with package.json's version ${version}`,
  )
  process.exitCode = bad === 0 ? 0 : 1
}
