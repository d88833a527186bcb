/**
 * Reading a fleet directory: every `*.yaml`, `*.yml` and `*.json` file below
 * it (dot-entries such as `.git` skipped), each a stream of YAML documents
 * (`List`s contribute their items). A file that cannot be read is a problem
 * naming the file; the other files are still read.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { KubeObject, parseObjects } from '../../functions/krm/index.js'
import { isEmptyDocument, splitDocuments } from '../package/documents.js'
import { decodeInput, listYamlFiles } from '../../functions/krm/main.js'

/** A file of the fleet that could not be read. */
export interface LoadProblem {
  /** Path relative to the fleet directory. */
  file: string
  message: string
}

/** The objects of a fleet directory, in file order, then document order. */
export interface LoadedFleet {
  root: string
  objects: KubeObject[]
  problems: LoadProblem[]
  /** A digest of every file read (paths and contents): equal digests, equal fleets. */
  digest: string
}

/** Reads every YAML file below `root`; objects record their file (relative to root) and document index. */
export function loadFleetDirectory(root: string): LoadedFleet {
  const objects: KubeObject[] = []
  const problems: LoadProblem[] = []
  const digest = readFleetFiles(root, problems, (text, file) => {
    try {
      objects.push(...readObjects(text, file))
    } catch (err) {
      problems.push({ file, message: (err as Error).message.replace(`${file}: `, '') })
    }
  })
  return { root, objects, problems, digest }
}

/** The digest loadFleetDirectory gives the fleet below `root`, without reading its objects. */
export function fleetDigest(root: string): string {
  return readFleetFiles(root, [], () => undefined)
}

/** Reads and decodes every YAML file below `root`, in order, into `onText`; returns the digest of what was read. */
function readFleetFiles(root: string, problems: LoadProblem[], onText: (text: string, file: string) => void): string {
  const digest = createHash('sha256')
  for (const file of listYamlFiles(root)) {
    let text: string
    try {
      const decoded = decodeInput(readFileSync(join(root, file)))
      if (!decoded.ok) {
        problems.push({ file, message: decoded.error.replace(/^input/, 'the file') })
        continue
      }
      text = decoded.text
      digest.update(`\0${file}\0${text.length}\0`).update(text)
    } catch (err) {
      problems.push({ file, message: (err as NodeJS.ErrnoException).code ?? (err as Error).message })
      continue
    }
    onText(text, file)
  }
  return digest.digest('hex')
}

/** Kinds every run reads whole: parsing them at once reports their syntax errors as the file's. */
const parsedAtOnce = new Set(['Repository', 'PackageVariant', 'PackageVariantSet', 'PackageVariantSetList', 'Kptfile'])

/**
 * The objects of one file, each kept as its text and parsed the first time
 * more than its identity is read (as the functions' lazy items are): a fleet
 * of thousands of clusters is mostly objects whose name and labels are all
 * anyone reads, and parsing them all would cost seconds and hundreds of MiB.
 * A document whose identity cannot be scanned is parsed at once, so its
 * errors are this file's; a file with directives, document end markers or
 * `List`s is parsed whole, as before.
 */
function readObjects(text: string, file: string): KubeObject[] {
  const docs = /^(%|\.\.\.)/m.test(text) ? undefined : splitDocuments(text)
  if (!docs) return parseObjects(text, file)
  const objects: KubeObject[] = []
  for (const [index, doc] of docs.entries()) {
    if (isEmptyDocument(doc.text)) continue
    const object = KubeObject.fromItemSource(asItem(doc.text), index)
    object.origin = { file, index }
    try {
      const kind = object.kind
      // Anything odd, and the kinds the plan reads whole anyway: parsed now, with the file's own error messages.
      if (kind === '' || kind.endsWith('List')) return parseObjects(text, file)
      if (parsedAtOnce.has(kind)) void object.node
    } catch {
      return parseObjects(text, file)
    }
    objects.push(object)
  }
  return objects
}

/** A document as an entry of a block sequence (`- apiVersion: ...`), which is how lazy items are kept. */
function asItem(doc: string): string {
  const lines = doc.replace(/\n$/, '').split('\n')
  return `- ${lines.map((line, i) => (i === 0 || line === '' ? line : `  ${line}`)).join('\n')}\n`
}
