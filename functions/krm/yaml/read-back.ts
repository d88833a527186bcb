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
import { isDocument, isMap, isScalar, parseDocument, visit } from 'yaml'
import type { Document, Node } from 'yaml'
import { readPlainDocument, stringifyYamlDocument } from './documents.js'

/**
 * True when `text` parses as YAML. A text without `#` has no comment to misplace and is taken as read; one that
 * plain-block.ts reads (its only comments kpt's `# kpt-merge:` ones, as after `kpt pkg get`) is well-formed, which
 * costs a twentieth of the library's parse; the rest is parsed.
 */
export function readsBack(text: string): boolean {
  if (!text.includes('#') || readPlainDocument(text) !== undefined) return true
  return parseDocument(text, { uniqueKeys: false }).errors.length === 0
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
