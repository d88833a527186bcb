/**
 * The printer's last resort: a printed text with comments is checked to read
 * back, and where it does not, comments are dropped. The `yaml` library's
 * printer can put a comment where its parser then misreads the line after it:
 * a comment after a key (`data: # note`, kept on the key by
 * comment-placement.ts) whose value a function then sets to an empty list
 * prints as `data: # note` with `[]` on the next line, at the key's own
 * indentation, which does not parse. Output that does not parse is worse than
 * output without comments (kpt rejects it, and the whole package with it), so
 * the caller drops the comments and says so (ResourceList warns per item,
 * resource-list.ts).
 */
import { fastPath } from '../fast-paths.js'
import { isDocument, isMap, isScalar, parseDocument, visit } from 'yaml'
import type { Document, Node } from 'yaml'
import { readPlainDocument, stringifyYamlDocument } from './documents.js'
import { isPlainBlockItem } from './item-syntax.js'

/**
 * True when `text` parses as YAML. A text without `#` has no comment to misplace and is taken as read, and so is
 * one whose only comment is kpt's `# kpt-merge:` on `metadata` (`onlyMergeComment`: what most resources of a
 * package are after `kpt pkg get`). One that item-syntax.ts proves well-formed as a list entry (the block style kpt
 * writes, comments included: a fortieth of the library's parse) or that plain-block.ts reads is well-formed; the
 * rest is parsed.
 */
export function readsBack(text: string): boolean {
  if (fastPath('yaml')) {
    if (!text.includes('#') || onlyMergeComment(text)) return true
    if (isPlainBlockItem(`- ${text.replace(/\n(?=[^\n])/g, '\n  ')}`) || readPlainDocument(text) !== undefined)
      return true
  }
  return parseDocument(text, { uniqueKeys: false }).errors.length === 0
}

/** kpt's merge comment on a resource's `metadata` key, at the top level (`<namespace>/<name>`, as kpt's merge-comment pass writes it). */
const mergeCommentLine = /^metadata: # kpt-merge: [^\s#]*$/

/**
 * True when every `#` of `text` is that of a `metadata: # kpt-merge: <namespace>/<name>` line with metadata's
 * content indented on the line below: a comment at the end of a key's line, before the key's indented value, reads
 * as the text without it, which is taken as read. A few string searches, where reading the text with plain-block.ts
 * costs a tenth of a millisecond (a thousand variants' injected objects, each marked with the comment by the clone,
 * took 0.15 s).
 */
function onlyMergeComment(text: string): boolean {
  for (let at = text.indexOf('#'); at >= 0;) {
    const end = text.indexOf('\n', at)
    if (end < 0 || !text.startsWith('  ', end + 1)) return false
    if (!mergeCommentLine.test(text.slice(text.lastIndexOf('\n', at) + 1, end))) return false
    at = text.indexOf('#', end)
  }
  return true
}

/**
 * Removes every comment of a document or a node and the nodes below it, except
 * inside the nodes of `keep`; true when there was one to remove.
 */
export function dropComments(target: Document | Node, keep?: ReadonlySet<unknown>): boolean {
  let dropped = false
  const clear = (holder: { comment?: string | null; commentBefore?: string | null }) => {
    if (holder.comment != null || holder.commentBefore != null) dropped = true
    holder.comment = null
    holder.commentBefore = null
  }
  if (!keep?.has(target)) {
    // A document's own comments (before its first node and after its last): visit meets only its nodes.
    if (isDocument(target)) clear(target)
    visit(target, {
      Node(_, node) {
        if (keep?.has(node)) return visit.SKIP
        clear(node)
        return undefined
      },
    })
  }
  return dropped
}

/**
 * Prints a document as `print` does, checked to read back (`readsBack`): where
 * it would not, the document's comments are dropped (from `doc` itself) and it
 * is printed again; `commentsDropped` says so, for the caller to warn. kpt's
 * `# kpt-merge:` identity comment on `metadata` is kept (the next `kpt pkg
 * update` matches the resource by it) unless the text still would not read
 * back with it. Text that would not read back even without comments (a
 * printer fault, never seen) throws rather than be written. For writers of
 * package files, which print documents outside a ResourceList (kpt-variants
 * render).
 */
export function printReadable(
  doc: Document,
  options: { wide?: boolean } = {},
): { text: string; commentsDropped: boolean } {
  const text = stringifyYamlDocument(doc, options)
  if (readsBack(text)) return { text, commentsDropped: false }
  const keep = mergeCommentKey(doc.contents)
  if (keep !== undefined && dropComments(doc, new Set([keep]))) {
    const kept = stringifyYamlDocument(doc, options)
    if (readsBack(kept)) return { text: kept, commentsDropped: true }
  }
  // (A text without comments reads back unless the printer is at fault: then nothing may be written.)
  dropComments(doc)
  const bare = stringifyYamlDocument(doc, options)
  if (!readsBack(bare)) throw new Error(`the YAML printer wrote a document that does not parse:\n${bare}`)
  return { text: bare, commentsDropped: true }
}

/** The `metadata` key of a resource's root map, when it carries kpt's `# kpt-merge:` comment. */
function mergeCommentKey(root: unknown): Node | undefined {
  if (!isMap(root)) return undefined
  const pair = root.items.find((p) => isScalar(p.key) && p.key.value === 'metadata')
  return isScalar(pair?.key) && pair.key.comment?.includes('kpt-merge:') ? pair.key : undefined
}
