/**
 * A new downstream package, exactly as `kpt pkg get <upstream>@<ref> <name>
 * --for-deployment` writes it: every file of the upstream package (but
 * `.git` paths and symbolic links), resources marked with their upstream
 * identity, the root Kptfile re-encoded with `upstream` and `upstreamLock`,
 * and a `package-context.yaml` next to every Kptfile.
 *
 * Everything but the two files that carry the package name is the same for
 * every variant of a revision, so `prepareRevision` does that work once and
 * `clonePackage` only adds the name.
 */
import { isAmbiguousString, isMap, isScalar, parse } from '../../functions/krm/yaml/index.js'
import { readableDocument } from '../../functions/krm/index.js'
import { isEmptyDocument, sequenceStyle, splitDocuments } from '../package/documents.js'
import { fileText, packageDirectories, sortedFiles, textFile } from '../package/files.js'
import type { PackageFile, PackageFiles } from '../package/files.js'
import { krmIgnoreFilter } from '../package/krmignore.js'
import { encodeJsonAsGo } from './go-json.js'
import { decodeKptfile, encodeKptfile } from './kptfile-struct.js'
import type { KptfileStruct } from './kptfile-struct.js'
import { addMergeComment } from './merge-comments.js'

/** Where a clone comes from, as its Kptfile records it. */
export interface UpstreamRef {
  /** The repository URL (kpt records the URL without `.git`; see `kptRepoUrl`). */
  repo: string
  /** The package directory in the repository, without leading slash (`""` for the root). */
  directory: string
  /** The ref asked for (`upstream.git.ref`) and the resolved one (`upstreamLock.git.ref`): a tag such as `nginx/v2`. */
  ref: string
  commit: string
}

/** A file as git stores it (`mode` 100644, 100755 or 120000 for a symbolic link). */
export interface UpstreamFile {
  mode: string
  content: Buffer
}

/** An upstream revision made ready for cloning: everything but the root Kptfile and root package context. */
export interface PreparedRevision {
  upstream: UpstreamRef
  /** Files of the clone, without the root `Kptfile` and the root `package-context.yaml`. */
  files: PackageFiles
  /** The root Kptfile of the upstream (decoded), or an empty one. */
  kptfile: KptfileStruct
  /** Notes for the user: ignored symbolic links, as kpt prints them; resources written without their comments (readableDocument). */
  warnings: string[]
}

/** kpt's `metadata.name` of the package-context ConfigMap and its file. */
const contextFile = 'package-context.yaml'

/**
 * Does the per-revision work of `kpt pkg get --for-deployment`; a failure is
 * kpt's message (a resource that is not KRM, malformed YAML, a bad Kptfile).
 */
export function prepareRevision(
  upstream: UpstreamRef,
  source: ReadonlyMap<string, UpstreamFile>,
): { ok: true; revision: PreparedRevision } | { ok: false; message: string } {
  const warnings: string[] = []
  const copied: [string, PackageFile][] = []
  for (const [path, file] of source) {
    if (
      path.split('/').some((_, i, parts) =>
        parts
          .slice(0, i + 1)
          .join('/')
          .endsWith('.git'),
      )
    )
      continue
    if (file.mode === '120000') {
      warnings.push(`Ignoring symlink ${JSON.stringify(path)}`)
      continue
    }
    copied.push([
      path,
      file.mode === '100755' ? { content: file.content, executable: true } : { content: file.content },
    ])
  }
  const files = sortedFiles(copied)
  let kptfile: KptfileStruct = {}
  const rootKptfile = files.get('Kptfile')
  if (rootKptfile) {
    const decoded = decodeKptfile(fileText(rootKptfile))
    if (!decoded.ok) return { ok: false, message: decoded.message }
    kptfile = decoded.value
  }
  files.delete('Kptfile')

  // The hook reads the Kptfiles and every YAML and JSON file of every package, .krmignore honoured.
  const packages = ['', ...packageDirectories(files)]
  const ignored = krmIgnoreFilter(files, packages)
  for (const [path, file] of [...files]) {
    if (ignored(path)) continue
    const base = path.slice(path.lastIndexOf('/') + 1)
    if (/\.(ya?ml)$/.test(base) || base === 'Kptfile') {
      const rewritten = rewriteYamlFile(path, fileText(file), base !== 'Kptfile', warnings)
      if (!rewritten.ok) return rewritten
      if (rewritten.text === undefined) files.delete(path)
      else if (rewritten.text !== fileText(file))
        files.set(path, { ...file, content: Buffer.from(rewritten.text, 'utf8') })
    } else if (base.endsWith('.json')) {
      const rewritten = rewriteJsonFile(path, fileText(file))
      if (!rewritten.ok) return rewritten
      if (rewritten.text === undefined) files.delete(path)
      else files.set(path, { ...file, content: Buffer.from(rewritten.text, 'utf8') })
    }
  }
  // The hook writes a fresh context next to every subpackage's Kptfile, named after that Kptfile.
  for (const dir of packageDirectories(files)) {
    const name = subpackageName(files.get(`${dir}/Kptfile`)!)
    files.set(`${dir}/${contextFile}`, textFile(packageContextText(name)))
  }
  return { ok: true, revision: { upstream, files: sortedFiles(files), kptfile, warnings } }
}

/** Clones already made, per revision and name: variants of one blueprint usually share the package name. */
const clones = new WeakMap<PreparedRevision, Map<string, PackageFiles>>()

/** The clone of a prepared revision named `name` (the last segment of the downstream package path). */
export function clonePackage(revision: PreparedRevision, name: string): PackageFiles {
  let byName = clones.get(revision)
  if (!byName) clones.set(revision, (byName = new Map<string, PackageFiles>()))
  let files = byName.get(name)
  if (!files) byName.set(name, (files = newClone(revision, name)))
  // A copy of the map: callers may change it; the file contents are never changed in place.
  return new Map(files)
}

function newClone(revision: PreparedRevision, name: string): PackageFiles {
  const { upstream } = revision
  const directory = `/${upstream.directory}`.replace(/\/+$/, '') || '/'
  const kptfile: KptfileStruct = {
    apiVersion: 'kpt.dev/v1',
    kind: 'Kptfile',
    metadata: { name, labels: revision.kptfile.metadata?.labels, annotations: revision.kptfile.metadata?.annotations },
    upstream: {
      type: 'git',
      git: { repo: upstream.repo, directory, ref: upstream.ref },
      updateStrategy: 'resource-merge',
    },
    upstreamLock: { type: 'git', git: { repo: upstream.repo, directory, ref: upstream.ref, commit: upstream.commit } },
    info: revision.kptfile.info,
    pipeline: revision.kptfile.pipeline,
    inventory: revision.kptfile.inventory,
    status: revision.kptfile.status,
  }
  const files = new Map(revision.files)
  files.set('Kptfile', textFile(encodeKptfile(kptfile)))
  files.set(contextFile, textFile(packageContextText(name)))
  return sortedFiles(files)
}

/**
 * The repository URL kpt records: the text before `.git` when the argument
 * names one (kpt requires it and cuts it off), else the URL as given.
 */
export function kptRepoUrl(url: string): string {
  const match = /^(.*?)\.git(\/|$)/.exec(url)
  return match ? match[1]! : url
}

/** The 8-line package context kpt generates; the name is plain unless YAML would read it as something else. */
export function packageContextText(name: string): string {
  const value = isAmbiguousString(name) || !/^[A-Za-z0-9_./-]+$/.test(name) ? JSON.stringify(name) : name
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: ${value}\n`
}

function subpackageName(kptfile: PackageFile): string {
  const decoded = decodeKptfile(fileText(kptfile))
  return decoded.ok ? (decoded.value.metadata?.name ?? '') : ''
}

type Rewritten = { ok: true; text: string | undefined } | { ok: false; message: string }

/**
 * One YAML file through the merge-comment pass and the hook: every document
 * must be KRM, package-context ConfigMaps are dropped (a file left empty is
 * deleted), resources get the kpt-merge comment and identifier, and the file
 * is written as kyaml writes it (documents joined by `---`, empty ones dropped).
 * A marked resource that would not parse printed with its comments is written
 * without them, with a warning (readableDocument).
 */
function rewriteYamlFile(path: string, text: string, markResources: boolean, warnings: string[]): Rewritten {
  const docs = splitDocuments(text) ?? [{ separator: '', text }]
  const out: string[] = []
  for (const { text: docText } of docs) {
    if (isEmptyDocument(docText)) continue
    let doc
    try {
      doc = parse(docText, { source: path })
    } catch (err) {
      return { ok: false, message: `${path}: MalformedYAMLError: ${(err as Error).message.replace(`${path}: `, '')}` }
    }
    const problem = krmProblem(doc.contents, path)
    if (problem) return { ok: false, message: `input resource list must contain only KRM resources: ${problem}` }
    if (isPackageContext(doc.contents)) continue
    if (markResources && addMergeComment(doc)) {
      const written = readableDocument(doc, { wide: sequenceStyle(docText) === 'wide', file: path })
      if (written.warning) warnings.push(written.warning)
      out.push(written.text)
    } else out.push(withFinalNewline(docText))
  }
  if (out.length === 0) return { ok: true, text: undefined }
  return { ok: true, text: out.join('---\n') }
}

/** A JSON resource file, re-encoded as kpt's hook writes it (Go's encoding/json: sorted keys, two-space indent). */
function rewriteJsonFile(path: string, text: string): Rewritten {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return { ok: false, message: `${path}: MalformedYAMLError: ${(err as Error).message}` }
  }
  const problem = krmProblemOfValue(value, path)
  if (problem) return { ok: false, message: `input resource list must contain only KRM resources: ${problem}` }
  const object = value as Record<string, unknown>
  const metadata = object['metadata'] as Record<string, unknown>
  if (object['apiVersion'] === 'v1' && object['kind'] === 'ConfigMap' && metadata['name'] === 'kptfile.kpt.dev')
    return { ok: true, text: undefined }
  return { ok: true, text: `${encodeJsonAsGo(value)}\n` }
}

/** kpt's check that an object is KRM (`apiVersion`, `kind`, `metadata.name`; Kustomization files are exempt). */
function krmProblem(node: unknown, path: string): string | undefined {
  if (!isMap(node)) return `${path}: resource must have \`apiVersion\``
  const get = (key: string) => {
    const v = node.get(key, true)
    return isScalar(v) && v.value !== null ? String(v.value) : ''
  }
  const metadata = node.get('metadata', true)
  const name = isMap(metadata) ? metadata.get('name', true) : undefined
  return krmFields(
    get('apiVersion'),
    get('kind'),
    isScalar(name) && name.value !== null ? String(name.value) : '',
    path,
  )
}

function krmProblemOfValue(value: unknown, path: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `${path}: resource must have \`apiVersion\``
  const object = value as Record<string, unknown>
  const metadata =
    typeof object['metadata'] === 'object' && object['metadata'] !== null
      ? (object['metadata'] as Record<string, unknown>)
      : {}
  const str = (v: unknown) => (typeof v === 'string' ? v : '')
  return krmFields(str(object['apiVersion']), str(object['kind']), str(metadata['name']), path)
}

function krmFields(apiVersion: string, kind: string, name: string, path: string): string | undefined {
  if (kind === 'Kustomization') return undefined
  if (apiVersion === '') return `${path}: resource must have \`apiVersion\``
  if (kind === '') return `${path}: resource must have \`kind\``
  if (name === '') return `${path}: resource must have \`metadata.name\``
  return undefined
}

/** The `v1 ConfigMap kptfile.kpt.dev`, which the hook replaces by a fresh one. */
function isPackageContext(node: unknown): boolean {
  if (!isMap(node)) return false
  const metadata = node.get('metadata', true)
  return (
    node.get('apiVersion') === 'v1' &&
    node.get('kind') === 'ConfigMap' &&
    isMap(metadata) &&
    metadata.get('name') === 'kptfile.kpt.dev'
  )
}

function withFinalNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`
}
