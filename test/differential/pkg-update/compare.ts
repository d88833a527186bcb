/** How the pkg-update differential test compares kpt's result with ours, and where they differ on purpose. */
import { isNode, parseAllDocuments, visit } from 'yaml'
import { fileText } from '../../../orchestrator/package/files.js'
import type { PackageFile } from '../../../orchestrator/package/files.js'

const serviceHead = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'web-metrics',
    namespace: 'prod',
    annotations: { 'internal.kpt.dev/upstream-identifier': '|Service|prod|web-metrics' },
  },
}
const metricsPort = { name: 'metrics', port: 9090 }
const adminPort = { name: 'admin', port: 9091, protocol: 'TCP' }

/**
 * Where kpt is wrong and we differ on purpose: kpt's result and ours, as
 * `comparable` gives them (undefined: no such file).
 */
export const knownDifferences: Record<string, { kpt: unknown; ours: unknown }> = {
  // Upstream adds `protocol: TCP` to a Service port (ports are keyed by port and protocol). kpt's
  // walk merges the key tuples (9090,"") and (9090,TCP) but then finds no element to replace, so
  // it keeps the old port and adds the new one: port 9090/TCP twice, which the API server rejects.
  // We drop the old element and append upstream's.
  'metrics-service.yaml': {
    kpt: [
      {
        ...serviceHead,
        spec: { selector: { app: 'web' }, ports: [metricsPort, { ...metricsPort, protocol: 'TCP' }, adminPort] },
      },
    ],
    ours: [
      { ...serviceHead, spec: { selector: { app: 'web' }, ports: [adminPort, { ...metricsPort, protocol: 'TCP' }] } },
    ],
  },
  // YAML files a .krmignore excludes: kpt's resource merge does not read them and its sync of
  // other files skips every *.yaml, so they never change after `kpt pkg get` (upstream
  // edits, additions and deletions are all lost). We sync them like other files.
  'raw/values.yaml': { kpt: [{ replicas: 1, image: 'nginx' }], ours: [{ replicas: 2, image: 'nginx' }] },
  'raw/extra.yaml': { kpt: undefined, ours: [{ extra: true }] },
}

const isYaml = (path: string) => /(^|\/)Kptfile$|\.ya?ml$/.test(path)

/** What the comparison sees of a file: YAML as values per document, anything else as bytes and mode. */
export function comparable(path: string, file: PackageFile | undefined): unknown {
  if (file === undefined) return undefined
  const text = fileText(file)
  if (!isYaml(path)) return { text, executable: Boolean(file.executable) }
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`)
      return doc.toJS() as unknown
    })
    .filter((value) => value !== null && value !== undefined)
}

/**
 * The comments of a YAML file, per document in order, as their trimmed lines.
 * (Kptfiles are left out: kpt drops their comments, we keep the downstream's.)
 */
export function comments(file: PackageFile): string[][] {
  return parseAllDocuments(fileText(file)).map((doc) => {
    const lines: string[] = []
    const add = (comment: string | null | undefined) => {
      if (comment)
        lines.push(
          ...comment
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean),
        )
    }
    add(doc.commentBefore)
    visit(doc, (_key, node) => {
      if (isNode(node)) {
        add(node.commentBefore)
        add(node.comment)
      }
    })
    add(doc.comment)
    return lines
  })
}
