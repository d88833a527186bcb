/**
 * One file object for each distinct content: the variants of a blueprint hold
 * mostly the same files, and the caches of a run (the codec's readings, the
 * merge's marking) recognise a file by its content buffer, so a package read
 * from disk or made by a merge is cheaper to work on when its files are the
 * ones seen before. Sharing changes no bytes: a pooled file is only ever
 * replaced, never edited in place.
 */
import { LRUCache } from 'lru-cache'
import { textFile } from './files.js'
import type { PackageFile, PackageFiles } from './files.js'

/** Budget: 4,000 files, most recently used kept; the distinct files of a run's blueprints, a few KB each. */
const defaultLimit = 4_000

export class ContentPool {
  readonly #files: LRUCache<string, PackageFile>
  readonly #texts: LRUCache<string, PackageFile>

  constructor(limit = defaultLimit) {
    this.#files = new LRUCache({ max: limit })
    this.#texts = new LRUCache({ max: limit })
  }

  /** The pooled file with `file`'s bytes and mode. */
  file(file: PackageFile): PackageFile {
    const key = `${file.executable ? 'x' : '-'}${file.content.toString('latin1')}`
    let pooled = this.#files.get(key)
    if (!pooled) this.#files.set(key, (pooled = ownCopy(file)))
    return pooled
  }

  /**
   * The pooled file holding `text` (UTF-8). Found by the text itself: a text
   * made once and handed out again (a remembered merge) is the same string,
   * whose hash is already known.
   */
  text(text: string, executable = false): PackageFile {
    if (executable) return this.file(textFile(text, executable))
    let file = this.#texts.get(text)
    if (!file) this.#texts.set(text, (file = this.file(textFile(text))))
    return file
  }

  /** `files` with each file replaced by its pooled one (a new map; `files` is left as it is). */
  files(files: PackageFiles): PackageFiles {
    const out: PackageFiles = new Map()
    for (const [path, file] of files) out.set(path, this.file(file))
    return out
  }
}

/**
 * The file with its bytes in memory of their own: a file read ahead is a view
 * of its whole package's buffer, and a small one made from text a view of a
 * shared slab, which a pooled file would otherwise keep alive.
 */
function ownCopy(file: PackageFile): PackageFile {
  const { content } = file
  if (content.byteOffset === 0 && content.buffer.byteLength === content.byteLength) return file
  const copy = Buffer.allocUnsafeSlow(content.byteLength)
  content.copy(copy)
  return file.executable ? { content: copy, executable: true } : { content: copy }
}
