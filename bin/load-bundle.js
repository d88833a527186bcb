// Loads a program of dist/bundles/ (made by scripts/bundle.ts) for its launcher in bin/.
//
// Each program is one CommonJS file, compiled here with the V8 code cache the build wrote beside it
// (<name>.cjs.cache): V8 then reads the compiled code instead of parsing and compiling the bundle's
// JavaScript. kpt-variants loads sooner, and so does each of its render threads; so does a function,
// which kpt starts once per package (see bench/RESULTS.md, 'bin/package-context, 50 resources, as a
// process'). A cache V8 rejects (another Node, other V8 flags, a bundle rebuilt without it) only costs
// that time: the code is compiled as usual. Node 20 has no compile cache of its own
// (module.enableCompileCache is Node 22's), and none at all for ES modules, hence CommonJS. On Node 22
// this one is still the faster, measured against module.enableCompileCache on `status` of the demo
// fleet (likely because this one is made after the module code ran, so it also holds the functions
// that code compiled).
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import vm from 'node:vm'

/**
 * V8 flags of each program, set before its code is compiled: V8 accepts a code cache only under the
 * flags it was made with, so the build makes each program's cache under that program's flags.
 */
const programFlags = {
  // A render keeps little (the fleet, the plan, a few packages in flight) and discards much (every
  // variant's documents). Left to itself V8 lets such a heap grow up to four times what the last
  // collection kept before collecting again: --force over 10,000 variants peaked far higher without
  // this, and was no faster (measured alternately; see bench/RESULTS.md, 're-render 10,000 unchanged
  // variants --force', peak RSS). Set for the process: every render thread has it.
  'kpt-variants': ['--heap-growing-percent=50'],
}

// Node 20 cannot import() from code compiled from a cache: where Node can require an ES module instead
// (20.19 and later), kpt-variants requires its optional Kubernetes client; elsewhere the bundle is
// required as it is.
const cacheable = process.features.require_module === true

/** Sets the V8 flags of program `name`, which its code must be compiled under; returns its bundle and code cache. */
function setUpProgram(name) {
  for (const flag of programFlags[name] ?? []) setFlagsFromString(flag)
  const file = fileURLToPath(new URL(`../dist/bundles/${name}.cjs`, import.meta.url))
  return { file, cache: `${file}.cache` }
}

/** Loads program `name` and returns its exports; `codeCache` says whether V8 used the cache. */
export function loadBundle(name) {
  const { file, cache } = setUpProgram(name)
  const cachedData = readIfPresent(cache)
  if (cachedData === undefined || !cacheable) {
    return { exports: createRequire(file)(file), codeCache: 'none' }
  }
  const script = compile(file, cachedData)
  return { exports: run(script, file), codeCache: script.cachedDataRejected ? 'rejected' : 'used' }
}

/**
 * Writes the code cache of program `name` (the build runs this in a process of its own, so that
 * only the program's flags are set). The cache is made after the bundle's module code has run:
 * it then holds the functions that code compiled too.
 */
export function writeCodeCache(name) {
  const { file, cache } = setUpProgram(name)
  const script = compile(file, undefined)
  run(script, file)
  const temporary = `${cache}.${process.pid}.tmp`
  writeFileSync(temporary, script.createCachedData())
  renameSync(temporary, cache)
}

function compile(file, cachedData) {
  // Node's CommonJS wrapper; the cache is made and used for exactly this text.
  const source = `(function (exports, require, module, __filename, __dirname) { ${readFileSync(file, 'utf8')}\n})`
  return new vm.Script(source, { filename: file, cachedData })
}

function run(script, file) {
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file))
  return module.exports
}

function readIfPresent(file) {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}
