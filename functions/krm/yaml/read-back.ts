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
import { isDocument, parseDocument, visit } from 'yaml'
import type { Document, Node } from 'yaml'
import { readPlainDocument } from './documents.js'

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
