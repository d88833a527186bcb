/**
 * Output that parses, for writers of package files outside a ResourceList
 * (kpt-variants render): the same guarantee and the same warning as
 * `ResourceList.toString()` (yaml/read-back.ts). A document that would not
 * parse with its comments is printed without them (kpt's `# kpt-merge:`
 * identity comment kept where it can be), and the writer warns, naming the
 * file and the object.
 */
import { isMap } from 'yaml'
import type { Document } from 'yaml'
import { KubeObject } from './kube-object.js'
import { printReadable, readsBack } from './yaml/index.js'

/**
 * The warning that an object's comments were dropped because, printed with them, the output would not parse as
 * YAML: `file` where it is written, `object` as `KubeObject.describe()` says it (`Kind/namespace/name`).
 */
export function commentsDroppedMessage(file: string | undefined, object: string): string {
  const where = file === undefined ? object : `${file} (${object})`
  return `comments dropped from ${where}: printed with them, the output would not parse as YAML`
}

/**
 * A document printed for the file `file` (`print` with `wide`), checked to read back: where it
 * would not, printed without its comments (dropped from `doc` itself), with `warning` saying so. `printed`: the
 * document as the caller already printed it, which is then not printed again unless it does not read back. Only
 * a text with a `#` is parsed again, and one that plain-block.ts reads (kpt-merge comments only) costs little.
 */
export function readableDocument(
  doc: Document,
  options: { wide?: boolean; file?: string; printed?: string } = {},
): { text: string; warning?: string } {
  if (options.printed !== undefined && readsBack(options.printed)) return { text: options.printed }
  const { text, commentsDropped } = printReadable(doc, { wide: options.wide ?? false })
  if (!commentsDropped) return { text }
  const object = isMap(doc.contents) ? new KubeObject(doc.contents, doc).describe() : 'document'
  return { text, warning: commentsDroppedMessage(options.file, object) }
}
