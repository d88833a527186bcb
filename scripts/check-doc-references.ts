/**
 * `npm run lint:docs`: the docs name only files, folders and symbols that exist. A doc that names a
 * module the code has moved away from sends its reader to the wrong place, so the lint fails on it,
 * listing `doc:line: `ref` does not exist`.
 *
 * What is checked in the docs (`docMatchers`):
 *
 * - A backticked span that reads as a path of the repository (the rules below). It must name a file
 *   or folder (a folder when it ends in `/`): from the repository's root, from the doc's folder, or,
 *   unless it starts with `./` or `../`, as the last whole segments of one: the docs name a module
 *   by its folder within orchestrator/ or functions/ (`run/memo.ts` is orchestrator/run/memo.ts,
 *   `plan.ts` is any file of that name).
 * - In a fenced block without a language (a map, a diagram), a word with a `/` that ends in an
 *   extension of code or docs (`run/memo.ts`), by the same rules. Other blocks (shell, YAML, output)
 *   are examples, whose paths are a user's.
 * - A relative link (`[text](target)`, `[label]: target`): from the doc's folder.
 * - A symbol, `name()`, `name(args)`, `Name.member`, `Name.member()` (a capital `Name`: `spec.x` is
 *   a field) or a camelCase name (`loadAndPlan`), where the doc names the code file it lives in: in
 *   the same table row, or in the same list of spans (between them only `,`, `:`, parentheses,
 *   "and", "or", "in": "`toNode` in `yaml/nodes.ts`", "`run/setup.ts`: `loadAndPlan`"). Its
 *   identifiers must appear in one of those files. A line of prose is not a list: a doc wraps it
 *   anywhere. The language's globals (`Symbol.for()`) are not ours.
 *
 * A span reads as a repository path when it has a `/` and its first segment is `.`, `..` or the name
 * of one of our folders, or when it has no `/` and ends in an extension of code or docs (`plan.ts`,
 * `RESULTS.md`; a data file's name alone, `results.yaml`, is as often a file a run writes). Not paths:
 *
 * - a span with a space (`kpt fn render`), a URL or scheme (`https://…`, `file://`), or a character
 *   no path of ours has: globs and patterns (`test/render*.e2e.test.ts`, `windows[]`), placeholders
 *   (`<pkg>/vN`, `sha256:…`, `./staging/src/...`), expressions (`key=value`, `system:masters`),
 *   revisions (`nginx/v3@1a2b3c4`);
 * - a placeholder in capitals: a segment (`DIR/out`) or a one- or two-letter word
 *   (`kpt-variants-X.Y.Z.tgz`, `edge-NN`);
 * - absolute, home and variable paths (`/usr/bin/chromium`, `~/.kube/config`, `$XDG_CACHE_HOME`),
 *   flags (`--out`) and npm packages (`@bufbuild/cel`);
 * - what a build or a run writes (`dist/`, `out/`, `demo/`, `bench/out/`, `node_modules/`);
 * - a first segment with a dot inside: a domain, API group or annotation (`ghcr.io/kpt-variants`,
 *   `config.porch.kpt.dev/v1alpha1`, `kpt-variants.dev/package-variant`);
 * - a last segment that is a version (`apps/v1`, `nginx/v2`, `P/vN`): an API version or a tag;
 * - git refs (`refs/heads/main`);
 * - a lone folder name (`run/`, `upstreams/`): in the docs as often a folder of the cache or of an
 *   output as one of ours, and the name of some folder anyway;
 * - a path whose first segment is none of our folders: another project's (Porch's
 *   `controllers/…`, Glasskube's `internal/dependency/`) or a library's (`lib/core`).
 *
 * `allowlist` names the few spans that read as paths on purpose but are none, each with its reason.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { posix } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The docs checked: the repository's markdown that describes the code as it is (not CHANGELOG.md, a history). */
export const docMatchers: readonly RegExp[] = [
  /^README\.md$/,
  /^CONTRIBUTING\.md$/,
  /^docs\/[^/]+\.md$/,
  /^orchestrator\/([^/]+\/)?README\.md$/,
  /^functions\/[^/]+\/README\.md$/,
  /^bench\/[^/]+\.md$/,
  /^deploy\/README\.md$/,
]

/** The extensions of code and docs: a name with one reads as a file of ours (`plan.ts`, `RESULTS.md`). */
export const nameExtensions: readonly string[] = ['ts', 'js', 'cjs', 'mjs', 'md', 'sh']

/** A name that ends in one of `nameExtensions`, with a stem. */
const named = new RegExp(`^[^/]+\\.(${nameExtensions.join('|')})$`)

/** The extensions of the files a symbol may live in. */
const codeFile = /\.(ts|js|cjs|mjs)$/

/** Extensions of files, which `Name.member` is not (`README.md`, `Kptfile.yaml`). */
const fileExtension = /^(ts|js|cjs|mjs|md|sh|ya?ml|json|txt|tsv|css|html|svg|png|go|mod|sum)$/

/** Spans that read as repository paths but name none, on purpose. */
export const allowlist: ReadonlyMap<string, string> = new Map([
  ['test/apiserver/bin/', 'built by scripts/build-cluster.sh; git ignores it'],
  ['tools/cosign/bin/', 'built by scripts/build-cosign.sh; git ignores it'],
  ['highlight.js', 'an npm package (docs/npm-dependencies.md), not a file'],
])

/** What the check needs of the repository: paths are relative to its root, with `/`, no trailing `/`. */
export interface Repository {
  /** Whether `path` is a file or a folder of the repository, or neither. */
  kind(path: string): 'file' | 'folder' | undefined
  /** The files and folders whose last segments are `tail`'s (`run/memo.ts` -> orchestrator/run/memo.ts). */
  withTail(tail: string): string[]
  /** A file's text, for the symbol check. */
  read(path: string): string | undefined
}

/** The language's and Node's globals, whose members are not ours (`Symbol.for()`, `JSON.parse()`). */
const globals = new Set(
  'Array BigInt Buffer Date Error JSON Map Math Number Object Promise Reflect RegExp Set String Symbol URL WeakMap import require structuredClone process console'.split(
    ' ',
  ),
)

/** A `Repository` of the given files (their folders are derived) and a reader of their text. */
export function repositoryOf(files: Iterable<string>, read: (path: string) => string | undefined): Repository {
  const kinds = new Map<string, 'file' | 'folder'>()
  const tails = new Map<string, string[]>()
  const add = (path: string, kind: 'file' | 'folder') => {
    if (kinds.has(path)) return
    kinds.set(path, kind)
    const segments = path.split('/')
    for (let i = 0; i < segments.length; i++) {
      const tail = segments.slice(i).join('/')
      const found = tails.get(tail)
      if (found) found.push(path)
      else tails.set(tail, [path])
    }
  }
  for (const file of files) {
    add(file, 'file')
    for (let at = file.lastIndexOf('/'); at > 0; at = file.lastIndexOf('/', at - 1)) add(file.slice(0, at), 'folder')
  }
  return { kind: (path) => kinds.get(path), withTail: (tail) => tails.get(tail) ?? [], read }
}

/** A reference that does not hold: `line` is 1-based. */
export interface Problem {
  line: number
  ref: string
  message: string
}

/** A backticked span: its text (as CommonMark reads it) and where it starts and ends in the doc. */
interface Span {
  text: string
  start: number
  end: number
  line: number
}

/** The problems of the references in one doc; `doc` is its path from the repository's root. */
export function checkMarkdown(doc: string, text: string, repo: Repository): Problem[] {
  const docDir = posix.dirname(doc)
  const { masked, mapLines } = fencedBlocks(text)
  const lineAt = lineFinder(masked)
  const spans = codeSpans(masked, lineAt)
  const tableRows = new Set(masked.split('\n').flatMap((line, i) => (/^\s*\|/.test(line) ? [i + 1] : [])))
  const problems: Problem[] = []
  const missing = (line: number, ref: string) => problems.push({ line, ref, message: 'does not exist' })

  // Paths named in backticks.
  const resolved = new Map<Span, string[]>()
  for (const span of spans) {
    if (allowlist.has(span.text) || symbolOf(span.text)) continue
    const path = pathOf(span.text, docDir, repo)
    if (path === undefined) continue
    const found = resolve(path, span.text.endsWith('/'), docDir, repo)
    if (found.length === 0) missing(span.line, span.text)
    else resolved.set(span, found)
  }

  // Paths in maps and diagrams.
  for (const { line, text: words } of mapLines)
    for (const [word] of words.matchAll(mapWord)) {
      const path = allowlist.has(word) ? undefined : pathOf(word, docDir, repo)
      if (path !== undefined && resolve(path, false, docDir, repo).length === 0) missing(line, word)
    }

  // Symbols, in the code files named beside them.
  for (const [i, span] of spans.entries()) {
    const symbol = symbolOf(span.text)
    if (!symbol) continue
    const row = tableRows.has(span.line)
    const files = [...resolved]
      .filter(([other]) => (row ? other.line === span.line : sameList(masked, spans, i, spans.indexOf(other))))
      .flatMap(([, paths]) => paths)
      .filter((path) => codeFile.test(path) && repo.kind(path) === 'file')
    if (files.length === 0) continue
    if (!files.some((file) => symbol.every((name) => mentions(repo.read(file) ?? '', name))))
      problems.push({ line: span.line, ref: span.text, message: `is not in ${files.join(' or ')}` })
  }

  // Relative links.
  const outsideSpans = blank(masked, spans)
  const links = [
    ...outsideSpans.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g),
    ...outsideSpans.matchAll(/^ {0,3}\[(?!\^)[^\]]+\]:\s*<?([^\s>]+)>?/gm),
  ]
  for (const link of links) {
    const target = link[1]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
    const path = safeDecode(target.replace(/[#?].*$/, ''))
    const full = posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(docDir, path)).replace(/\/$/, '')
    if (full.startsWith('../') || full === '.' || repo.kind(full) !== undefined) continue
    missing(lineAt(link.index), target)
  }

  return problems.sort((a, b) => a.line - b.line)
}

/** A word of a map that may be a path: segments joined by `/`, ending in an extension of code or docs. */
const mapWord = new RegExp(`(?<![\\w./<>-])(?:[\\w.-]+/)+[\\w.-]+\\.(?:${nameExtensions.join('|')})(?![\\w/<>-])`, 'g')

/** The path a span names, or undefined when it does not read as a repository path (the rules above). */
export function pathOf(span: string, docDir: string, repo: Repository): string | undefined {
  if (span === '' || /\s/.test(span) || /^[a-z][a-z0-9+.-]*:/i.test(span) || span.includes('...')) return undefined
  if (/^[/~$@-]/.test(span) || /[*?[\]{}<>…|"'=,;:()@\\]/.test(span)) return undefined
  const path = span.replace(/\/$/, '')
  const segments = path.split('/')
  const first = segments[0]!
  const last = segments[segments.length - 1]!
  if (segments.some((segment) => segment === '' || /^[A-Z][A-Z_]*$/.test(segment) || /\b[A-Z]{1,2}\b/.test(segment)))
    return undefined
  if (segments.length === 1) return named.test(span) ? path : undefined
  if (/^(dist|out|demo|node_modules|coverage)$/.test(first) || /^bench\/out(\/|$)/.test(path)) return undefined
  if (/^[^.]+\..+/.test(first) || first === 'refs' || /^v(\d+(\.\d+)*([a-z]+\d*)?|N)$/.test(last)) return undefined
  const ours =
    first === '.' ||
    first === '..' ||
    repo.kind(posix.join(docDir, first)) === 'folder' ||
    repo.withTail(first).some((found) => repo.kind(found) === 'folder')
  return ours ? path : undefined
}

/**
 * The repository paths `path` names, the first way that finds any: from the root, from the doc's
 * folder, or (unless it starts with `./` or `../`) as the tail of some.
 */
function resolve(path: string, folder: boolean, docDir: string, repo: Repository): string[] {
  const fits = (candidate: string) => {
    const kind = repo.kind(candidate)
    return !candidate.startsWith('../') && kind !== undefined && (!folder || kind === 'folder')
  }
  const explicit = /^\.\.?\//.test(path)
  const ways = [
    () => (explicit ? [] : [posix.normalize(path)]),
    () => [posix.join(docDir, path)],
    () => (explicit ? [] : repo.withTail(posix.normalize(path))),
  ]
  for (const way of ways) {
    const found = way().filter(fits)
    if (found.length > 0) return found
  }
  return []
}

/** The identifiers a symbol span names (`name()` -> [name], `Name.member` -> [Name, member]), or undefined. */
export function symbolOf(span: string): string[] | undefined {
  const call = /^([A-Za-z_$][\w$]*)\([^()`]*\)$/.exec(span)
  if (call) return globals.has(call[1]!) ? undefined : [call[1]!]
  if (/^[A-Za-z_$][\w$]*$/.test(span) && /[a-z][A-Z]/.test(span) && !globals.has(span)) return [span]
  const member = /^([A-Z][\w$]*)\.([A-Za-z_$][\w$]*)(\([^()`]*\))?$/.exec(span)
  if (member && !fileExtension.test(member[2]!) && !globals.has(member[1]!)) return [member[1]!, member[2]!]
  return undefined
}

/** `text` decoded as a URL's path, or as it is when it is not one. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** Whether spans `a` and `b` are in one list: between them only `,`, `:`, parentheses, "and", "or", "in". */
function sameList(text: string, spans: readonly Span[], a: number, b: number): boolean {
  if (b < 0) return false
  const [from, to] = a < b ? [a, b] : [b, a]
  for (let i = from; i < to; i++) {
    const between = text.slice(spans[i]!.end, spans[i + 1]!.start)
    if (!/^(\s|[,:()]|\band\b|\bor\b|\bin\b)*$/.test(between)) return false
  }
  return true
}

/** Whether `code` has `name` as a whole identifier. */
function mentions(code: string, name: string): boolean {
  return new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(code)
}

/**
 * `text` with the lines of fenced code blocks (and their fences) emptied, so line numbers stay, and
 * the lines of the blocks without a language (maps, diagrams), 1-based.
 */
function fencedBlocks(text: string): { masked: string; mapLines: { line: number; text: string }[] } {
  const mapLines: { line: number; text: string }[] = []
  let fence: { marker: string; map: boolean } | undefined
  const masked = text.split('\n').map((line, i) => {
    const opening = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line)
    if (fence === undefined) {
      if (!opening) return line
      fence = { marker: opening[1]!, map: opening[2]!.trim() === '' }
      return ''
    }
    if (
      opening &&
      opening[1]![0] === fence.marker[0] &&
      opening[1]!.length >= fence.marker.length &&
      opening[2]!.trim() === ''
    )
      fence = undefined
    else if (fence.map) mapLines.push({ line: i + 1, text: line })
    return ''
  })
  return { masked: masked.join('\n'), mapLines }
}

/** The 1-based line of an offset. */
function lineFinder(text: string): (offset: number) => number {
  const starts = [0]
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1)
  return (offset) => {
    let low = 0
    let high = starts.length - 1
    while (low < high) {
      const mid = (low + high + 1) >> 1
      if (starts[mid]! <= offset) low = mid
      else high = mid - 1
    }
    return low + 1
  }
}

/**
 * The inline code spans of `text`, as CommonMark finds them: a run of backticks opens one, the next
 * run of the same length closes it, within a paragraph; a run with no closing run is literal.
 */
function codeSpans(text: string, lineAt: (offset: number) => number): Span[] {
  const spans: Span[] = []
  const runs = [...text.matchAll(/(?<!\\)`+/g)]
  const blankLine = /\n[ \t]*\n/g
  for (let i = 0; i < runs.length; i++) {
    const open = runs[i]!
    let close = i + 1
    while (close < runs.length && runs[close]![0].length !== open[0].length) close++
    blankLine.lastIndex = open.index
    const paragraphEnd = blankLine.exec(text)?.index ?? text.length
    if (close === runs.length || runs[close]!.index > paragraphEnd) continue
    const start = open.index + open[0].length
    let content = text.slice(start, runs[close]!.index).replace(/\n/g, ' ')
    if (/^ .*[^ ].* $/.test(content)) content = content.slice(1, -1)
    spans.push({ text: content, start: open.index, end: runs[close]!.index + open[0].length, line: lineAt(open.index) })
    i = close
  }
  return spans
}

/** `text` with the spans' characters (newlines kept) replaced by spaces. */
function blank(text: string, spans: readonly Span[]): string {
  let out = ''
  let at = 0
  for (const span of spans) {
    out += text.slice(at, span.start) + text.slice(span.start, span.end).replace(/[^\n]/g, ' ')
    at = span.end
  }
  return out + text.slice(at)
}

/** The repository's files as git sees them: tracked or new, not ignored, and present. */
function repositoryFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  return [...new Set(listed.split('\0'))].filter((file) => file !== '' && existsSync(posix.join(root, file)))
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = posix.join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')
  const files = repositoryFiles(root)
  const read = (path: string) => {
    const full = posix.join(root, path)
    return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined
  }
  const repo = repositoryOf(files, read)
  const docs = files.filter((file) => docMatchers.some((matcher) => matcher.test(file))).sort()
  let count = 0
  for (const doc of docs)
    for (const problem of checkMarkdown(doc, read(doc) ?? '', repo)) {
      console.error(`${doc}:${problem.line}: \`${problem.ref}\` ${problem.message}`)
      count++
    }
  if (count > 0) {
    console.error(`${count} reference(s) to what does not exist (scripts/check-doc-references.ts says what is checked)`)
    process.exitCode = 1
  } else console.log(`the ${docs.length} docs name only what exists`)
}
