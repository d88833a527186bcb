/**
 * Comments after a parse: where the `yaml` package and go-yaml disagree on
 * which node a comment belongs to, go-yaml's (so kpt's) placement; and comment
 * text the library's printer would turn into a line that does not parse.
 */
import { isCollection, isMap, isScalar, visit } from 'yaml'
import type { Document, Node } from 'yaml'

/**
 * Moves two comment placements back to where go-yaml keeps them, so that kpt's
 * comment copy-back does not duplicate them (docs/upstream-behaviour.md, "Comments and field order"):
 * 1. `- # comment` before a map item: the comment belongs to the first key;
 * 2. `key: # comment` before a block collection: the comment belongs to the key.
 * Line separators in comment text become spaces (see `printableComment`).
 * The source tokens it reads are released afterwards: nothing else reads them,
 * and they are more than half of what a parsed document holds. A document
 * parsed without them (its text had no `#`) has no comment to move.
 */
export function fixCommentPlacement(doc: Document): void {
  if (!doc.contents?.srcToken) return
  cleanComments(doc)
  const releaseAndClean = (node: { srcToken?: unknown }) => {
    node.srcToken = undefined
    cleanComments(node as Commented)
  }
  visit(doc, {
    Scalar: (_, scalar) => releaseAndClean(scalar),
    Alias: (_, alias) => releaseAndClean(alias),
    Pair: (_, pair) => releaseAndClean(pair),
    Seq(_, seq) {
      const token = seq.srcToken
      releaseAndClean(seq)
      if (token?.type !== 'block-seq') return
      seq.items.forEach((item, i) => {
        const itemToken = token.items[i]
        if (!itemToken || !isMap(item) || item.commentBefore == null || item.items.length === 0) return
        if (!hasCommentAfterDash(itemToken.start)) return
        const firstKey = item.items[0]!.key as Node
        firstKey.commentBefore = firstKey.commentBefore
          ? `${item.commentBefore}\n${firstKey.commentBefore}`
          : item.commentBefore
        item.commentBefore = undefined
      })
    },
    Map(_, map) {
      const token = map.srcToken
      releaseAndClean(map)
      if (token?.type !== 'block-map') return
      map.items.forEach((pair, i) => {
        const value = pair.value
        const itemToken = token.items[i]
        if (!itemToken || !isCollection(value) || value.commentBefore == null || !isScalar(pair.key)) return
        const inline = inlineComment(itemToken.sep)
        if (inline === undefined) return
        const [first, ...rest] = value.commentBefore.split('\n')
        if (first !== inline) return
        pair.key.comment = inline
        value.commentBefore = rest.length > 0 ? rest.join('\n') : undefined
      })
    },
  })
}

type SourceToken = { type: string; source?: string }

function hasCommentAfterDash(start: readonly SourceToken[]): boolean {
  let afterDash = false
  for (const t of start) {
    if (t.type === 'seq-item-ind') afterDash = true
    else if (t.type === 'newline') afterDash = false
    else if (afterDash && t.type === 'comment') return true
  }
  return false
}

function inlineComment(sep: readonly SourceToken[] | undefined): string | undefined {
  for (const t of sep ?? []) {
    if (t.type === 'newline') return undefined
    // The library stores an empty `#` comment as ' '.
    if (t.type === 'comment') return t.source!.slice(1) || ' '
  }
  return undefined
}

type Commented = { comment?: string | null; commentBefore?: string | null }

function cleanComments(node: Commented): void {
  if (node.comment) node.comment = printableComment(node.comment)
  if (node.commentBefore) node.commentBefore = printableComment(node.commentBefore)
}

/**
 * U+2028 and U+2029 are not line breaks in YAML, so a comment can hold them,
 * but they end a line for JavaScript's multiline regular expressions, and the
 * library's printer starts a comment line with one: `re  #\u2028gion: eu`
 * prints as `re  \u2028#gion: eu`, where `#` no longer follows white space and
 * the comment becomes part of the value (fuzz seed -1958739682). A space
 * keeps the comment's words and the output parseable.
 */
function printableComment(text: string): string {
  return text.replace(/[\u2028\u2029]/g, ' ')
}
