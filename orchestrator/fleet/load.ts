/**
 * Reading a fleet directory: every `*.yaml`, `*.yml` and `*.json` file below
 * it (dot-entries such as `.git` skipped), each a stream of YAML documents
 * (`List`s contribute their items). A file that cannot be read is a problem
 * naming the file; the other files are still read.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseObjects } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
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
    try {
      objects.push(...parseObjects(text, file))
    } catch (err) {
      problems.push({ file, message: (err as Error).message.replace(`${file}: `, '') })
    }
  }
  return { root, objects, problems, digest: digest.digest('hex') }
}
