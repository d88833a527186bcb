/**
 * Which code made a cached result. A render recorded by one build must not
 * answer for another, whose output may differ; so the records of renders and
 * of quiet runs are keyed by this identity: the version, for a person, and a
 * hash of the program's bytes, since a rebuild keeps the version. A file's
 * modification time would not do: a copy, an install or a checkout sets it
 * afresh for the same bytes, and two builds can share one.
 */
import { createHash, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { version } from '../util/version.js'

/** The identity of the code in `file` (a program's bundle) at `codeVersion`. */
export function codeIdentityOf(codeVersion: string, file: string): string {
  let hash: string
  try {
    hash = createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 32)
  } catch {
    // Unreadable (removed while running): matches nothing recorded, which costs only full renders.
    hash = `unread:${randomUUID()}`
  }
  return `${codeVersion}+${hash}`
}

let running: string | undefined

/**
 * The identity of the running code. In the programs, this module is part of
 * the bundle (dist/bundles/kpt-variants.cjs, which every render thread loads
 * too), and its URL is the bundle's (scripts/bundle.ts); the sources, as
 * tests run them, stand for themselves by this file. Hashed once, when first
 * asked (it reads the whole bundle), not by a run that records nothing.
 */
export function codeIdentity(): string {
  return (running ??= codeIdentityOf(version, fileURLToPath(import.meta.url)))
}
