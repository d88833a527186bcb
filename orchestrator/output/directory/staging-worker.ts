/** The staging thread of staging-thread.ts: writes each package it is sent (or removes a tree), in order, and says which it could not. */
import { parentPort } from 'node:worker_threads'
import { removeTree, unpackFiles, writePackageFiles } from './write-files.js'
import type { PackedFiles } from './write-files.js'

parentPort!.on('message', ({ dir, files }: { dir: string; files?: PackedFiles }) => {
  try {
    if (files) writePackageFiles(dir, unpackFiles(files))
    else removeTree(dir)
    parentPort!.postMessage({ dir })
  } catch (err) {
    parentPort!.postMessage({ dir, error: (err as Error).message })
  }
})
