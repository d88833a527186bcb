/**
 * The CEL environment of PackageVariantSet templates (docs/upstream-behaviour.md, "Templates and CEL";
 * "CEL environment"): standard CEL only, five variables, string results.
 *
 * Each distinct expression is parsed, checked and planned once per run
 * (`CelEngine.compile` caches by source text). Evaluation cost is bounded in
 * two ways, since @bufbuild/cel has no cost limit of its own:
 * - statically, before any evaluation: comprehension nesting depth and an
 *   estimate of the iterations (literal list sizes, `assumedCollectionSize`
 *   for data such as labels) are checked against the budget;
 * - dynamically: every comprehension's loop condition is wrapped in a call
 *   that counts iterations and stops the loop once the per-evaluation or
 *   per-run step budget is spent.
 */
import {
  celEnv,
  celError,
  celFunc,
  CelScalar,
  isCelError,
  isCelList,
  isCelMap,
  isCelUint,
  parse,
  plan,
} from '@bufbuild/cel'
import type { CelEnv, CelResult } from '@bufbuild/cel'
import { RE2JS } from '@bufbuild/re2'

/** The variables Porch declares (cel-go `EnvOption`s in `compileExpr`). */
export const celVariables = ['repoDefault', 'packageDefault', 'upstream', 'target', 'repository'] as const

/** Values bound to the variables; objects are already projected (see `projectObject`). */
export interface CelBindings {
  repoDefault: string
  packageDefault: string
  upstream: Map<string, unknown>
  target: Map<string, unknown>
  /** Absent while `repoExpr` is evaluated, as in Porch. */
  repository?: Map<string, unknown>
}

/** Limits on what one run may spend on CEL. */
export interface CelBudget {
  /** Deepest allowed nesting of comprehensions (`all`, `exists`, `map`, `filter`...). */
  maxNesting: number
  /** Largest static estimate of comprehension iterations for one evaluation. */
  maxEstimatedSteps: number
  /** Comprehension iterations allowed in one evaluation. */
  maxStepsPerEvaluation: number
  /** Comprehension iterations allowed in the whole run. */
  maxStepsPerRun: number
  /** Size assumed for a collection whose size is only known at run time (labels, annotations). */
  assumedCollectionSize: number
}

/** Defaults: generous for templates (which rarely iterate at all), tight enough to stop in well under a second. */
export const defaultCelBudget: CelBudget = {
  maxNesting: 4,
  maxEstimatedSteps: 1_000_000,
  maxStepsPerEvaluation: 100_000,
  maxStepsPerRun: 5_000_000,
  assumedCollectionSize: 100,
}

/** A compiled expression, or the Porch-style message of why it cannot run. */
export type CompiledExpr =
  | { ok: true; source: string; run: (bindings: CelBindings) => CelResult; usesRepository: boolean }
  | { ok: false; error: string }

const budgetFunction = '@kpt_variants_budget'
const declared = new Set<string>(celVariables)

/** Compiles and evaluates template expressions for one run. */
export class CelEngine {
  private readonly env: CelEnv
  private readonly cache = new Map<string, CompiledExpr>()
  private evaluationSteps = 0
  private runSteps = 0
  private exceeded: 'evaluation' | 'run' | undefined

  constructor(readonly budget: CelBudget = defaultCelBudget) {
    const regexes = new Map<string, { test(text: string): boolean }>()
    this.env = celEnv({
      variables: {
        repoDefault: CelScalar.STRING,
        packageDefault: CelScalar.STRING,
        upstream: CelScalar.DYN,
        target: CelScalar.DYN,
        repository: CelScalar.DYN,
      },
      funcs: [celFunc(budgetFunction, [CelScalar.BOOL], CelScalar.BOOL, (cond) => this.step(cond))],
      // RE2 semantics (linear time), with each pattern compiled once per run.
      re2: {
        compile(pattern) {
          let matcher = regexes.get(pattern)
          if (!matcher) {
            const re = RE2JS.compile(pattern)
            matcher = { test: (text: string) => re.test(text) }
            regexes.set(pattern, matcher)
          }
          return matcher
        },
      },
    })
  }

  /** Number of distinct expressions compiled so far. */
  get compiledCount(): number {
    return this.cache.size
  }

  /** Parses, checks and plans an expression (once per distinct source). */
  compile(source: string): CompiledExpr {
    let compiled = this.cache.get(source)
    if (!compiled) {
      compiled = this.compileUncached(source)
      this.cache.set(source, compiled)
    }
    return compiled
  }

  /** Evaluates an expression that must yield a string; errors are Porch-style texts (without the field prefix). */
  evalString(source: string, bindings: CelBindings): { ok: true; value: string } | { ok: false; error: string } {
    const compiled = this.compile(source)
    if (!compiled.ok) return compiled
    this.evaluationSteps = 0
    this.exceeded = undefined
    let result: CelResult
    try {
      result = compiled.run(bindings)
    } catch (err) {
      result = celError(err)
    }
    if (this.exceeded === 'evaluation') {
      return {
        ok: false,
        error: `evaluation cost exceeded the budget of ${this.budget.maxStepsPerEvaluation} comprehension steps`,
      }
    }
    if (this.exceeded === 'run') {
      return {
        ok: false,
        error: `evaluation cost exceeded the budget of ${this.budget.maxStepsPerRun} comprehension steps for this run`,
      }
    }
    if (isCelError(result)) return { ok: false, error: runtimeMessage(result.message, compiled, bindings) }
    if (typeof result === 'string') return { ok: true, value: result }
    return { ok: false, error: conversionError(result) }
  }

  /** Counts one comprehension iteration; once over budget, yields an error, which ends the loop (EvalFold). */
  private step(cond: boolean): boolean {
    this.evaluationSteps++
    this.runSteps++
    if (this.evaluationSteps > this.budget.maxStepsPerEvaluation) this.exceeded = 'evaluation'
    else if (this.runSteps > this.budget.maxStepsPerRun) this.exceeded = 'run'
    else return cond
    return celError('evaluation budget exceeded') as unknown as boolean
  }

  private compileUncached(source: string): CompiledExpr {
    const tooBig = sizeError(source)
    if (tooBig) return { ok: false, error: tooBig }
    let parsed: ReturnType<typeof parse>
    try {
      parsed = parse(source)
    } catch (err) {
      if (err instanceof RangeError) return { ok: false, error: tooDeep }
      return { ok: false, error: syntaxMessage((err as Error).message, source) }
    }
    let analysis: Analysis
    try {
      analysis = analyse(parsed.expr, this.budget)
    } catch (err) {
      // A long chain of operators (`a + a + ...`) nests without brackets; the walk's stack is the limit.
      if (err instanceof RangeError) return { ok: false, error: tooDeep }
      throw err
    }
    if (analysis.undeclared) {
      const offset = Number(parsed.sourceInfo?.positions[String(analysis.undeclared.id) as unknown as number] ?? 0)
      return {
        ok: false,
        error: withSnippet(source, offset, `undeclared reference to '${analysis.undeclared.name}' (in container '')`),
      }
    }
    if (analysis.maxNesting > this.budget.maxNesting) {
      return {
        ok: false,
        error: `comprehensions are nested ${analysis.maxNesting} deep; the evaluation budget allows ${this.budget.maxNesting}`,
      }
    }
    if (analysis.estimatedSteps > this.budget.maxEstimatedSteps) {
      return {
        ok: false,
        error: `estimated evaluation cost of ${formatCount(analysis.estimatedSteps)} comprehension steps exceeds the budget of ${formatCount(this.budget.maxEstimatedSteps)}`,
      }
    }
    instrumentComprehensions(parsed.expr, analysis.maxId)
    const run = plan(this.env, parsed) as unknown as (bindings: CelBindings) => CelResult
    return { ok: true, source, run, usesRepository: analysis.references.has('repository') }
  }
}

/** cel-go's parser limits: expression size in code points, and nesting of brackets. */
const maxExpressionSize = 100_000
const maxBracketDepth = 250
const tooDeep = `expression nested too deeply (more than ${maxBracketDepth} levels)`

/** cel-go's size and depth limits, checked on the text so the parser never recurses without bound. */
function sizeError(source: string): string | undefined {
  const size = [...source].length
  if (size > maxExpressionSize)
    return `expression code point size exceeds limit: size: ${size}, limit ${maxExpressionSize}`
  let depth = 0
  let quote: string | undefined
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!
    if (quote) {
      if (c === '\\') i++
      else if (c === quote) quote = undefined
    } else if (c === '"' || c === "'") quote = c
    else if (c === '(' || c === '[' || c === '{') {
      if (++depth > maxBracketDepth) return tooDeep
    } else if ((c === ')' || c === ']' || c === '}') && depth > 0) depth--
  }
  return undefined
}

// --- static analysis over the parsed AST (cel.expr.Expr messages) ---

/** The parts of `cel.expr.Expr` the analysis reads (protobuf-es message shape). */
interface ExprNode {
  $typeName?: string
  id: bigint
  exprKind: { case: string | undefined; value?: unknown }
}

interface Comprehension {
  iterVar: string
  iterVar2?: string
  accuVar: string
  iterRange?: ExprNode
  accuInit?: ExprNode
  loopCondition?: ExprNode
  loopStep?: ExprNode
  result?: ExprNode
}

interface Analysis {
  undeclared?: { name: string; id: bigint }
  references: Set<string>
  maxNesting: number
  estimatedSteps: number
  maxId: bigint
}

function analyse(root: ExprNode, budget: CelBudget): Analysis {
  const out: Analysis = { references: new Set(), maxNesting: 0, estimatedSteps: 0, maxId: 0n }
  const walk = (e: ExprNode | undefined, scope: readonly string[], depth: number): number => {
    if (!e) return 0
    if (e.id > out.maxId) out.maxId = e.id
    const kind = e.exprKind
    switch (kind.case) {
      case 'identExpr': {
        const name = (kind.value as { name: string }).name
        if (!scope.includes(name)) {
          if (declared.has(name)) out.references.add(name)
          else if (!out.undeclared) out.undeclared = { name, id: e.id }
        }
        return 0
      }
      case 'selectExpr':
        return walk((kind.value as { operand?: ExprNode }).operand, scope, depth)
      case 'callExpr': {
        const call = kind.value as { target?: ExprNode; args: ExprNode[] }
        let cost = walk(call.target, scope, depth)
        for (const arg of call.args) cost += walk(arg, scope, depth)
        return cost
      }
      case 'listExpr':
        return (kind.value as { elements: ExprNode[] }).elements.reduce((c, el) => c + walk(el, scope, depth), 0)
      case 'structExpr': {
        const entries = (
          kind.value as {
            entries: { mapKey?: ExprNode; value?: ExprNode; keyKind?: { case: string; value: unknown } }[]
          }
        ).entries
        let cost = 0
        for (const entry of entries) {
          if (entry.keyKind?.case === 'mapKey') cost += walk(entry.keyKind.value as ExprNode, scope, depth)
          cost += walk(entry.value, scope, depth)
        }
        return cost
      }
      case 'comprehensionExpr': {
        const c = kind.value as Comprehension
        const nesting = depth + 1
        if (nesting > out.maxNesting) out.maxNesting = nesting
        const inner = [...scope, c.iterVar, c.accuVar, ...(c.iterVar2 ? [c.iterVar2] : [])]
        const rangeCost = walk(c.iterRange, scope, depth)
        const initCost = walk(c.accuInit, inner, depth)
        const bodyCost = walk(c.loopCondition, inner, nesting) + walk(c.loopStep, inner, nesting)
        const resultCost = walk(c.result, inner, depth)
        return rangeCost + initCost + resultCost + rangeSize(c.iterRange, budget) * (1 + bodyCost)
      }
      default:
        return 0
    }
  }
  out.estimatedSteps = walk(root, [], 0)
  return out
}

/** Upper estimate of a comprehension range's size. */
function rangeSize(e: ExprNode | undefined, budget: CelBudget): number {
  if (!e) return 0
  const kind = e.exprKind
  switch (kind.case) {
    case 'listExpr':
      return (kind.value as { elements: unknown[] }).elements.length
    case 'structExpr':
      return (kind.value as { entries: unknown[] }).entries.length
    case 'comprehensionExpr':
      // map() and filter() yield at most one element per element of their range.
      return rangeSize((kind.value as Comprehension).iterRange, budget)
    case 'callExpr': {
      const call = kind.value as { function: string; args: ExprNode[] }
      if (call.function === '_+_') return call.args.reduce((n, a) => n + rangeSize(a, budget), 0)
      return budget.assumedCollectionSize
    }
    default:
      return budget.assumedCollectionSize
  }
}

/** Wraps every loop condition in the budget call, so each iteration is counted and can stop the loop. */
function instrumentComprehensions(root: ExprNode, maxId: bigint): void {
  let nextId = maxId
  const visit = (e: ExprNode | undefined): void => {
    if (!e) return
    const kind = e.exprKind
    switch (kind.case) {
      case 'selectExpr':
        visit((kind.value as { operand?: ExprNode }).operand)
        return
      case 'callExpr': {
        const call = kind.value as { target?: ExprNode; args: ExprNode[] }
        visit(call.target)
        call.args.forEach(visit)
        return
      }
      case 'listExpr':
        ;(kind.value as { elements: ExprNode[] }).elements.forEach(visit)
        return
      case 'structExpr':
        for (const entry of (
          kind.value as { entries: { value?: ExprNode; keyKind?: { case: string; value: unknown } }[] }
        ).entries) {
          if (entry.keyKind?.case === 'mapKey') visit(entry.keyKind.value as ExprNode)
          visit(entry.value)
        }
        return
      case 'comprehensionExpr': {
        const c = kind.value as Comprehension
        for (const part of [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result]) visit(part)
        const condition = c.loopCondition
        if (condition) {
          nextId++
          c.loopCondition = {
            $typeName: 'cel.expr.Expr',
            id: nextId,
            exprKind: {
              case: 'callExpr',
              value: { $typeName: 'cel.expr.Expr.Call', function: budgetFunction, args: [condition] },
            },
          }
        }
        return
      }
      default:
        return
    }
  }
  visit(root)
}

// --- messages in cel-go's shape ---

/** cel-go prints compile errors as `ERROR: <input>:L:C: msg` followed by the source line and a caret. */
function withSnippet(source: string, offset: number, message: string): string {
  const before = source.slice(0, offset)
  const line = before.split('\n').length
  const column = offset - (before.lastIndexOf('\n') + 1)
  const text = source.split('\n')[line - 1] ?? ''
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${text}\n | ${'.'.repeat(column)}^`
}

function syntaxMessage(message: string, source: string): string {
  const match = /^<input>:(\d+):(\d+): (.*)$/s.exec(message)
  if (!match) return `ERROR: <input>: Syntax error: ${message}`
  const line = Number(match[1])
  const column = Number(match[2])
  const lines = source.split('\n')
  const offset = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + column - 1
  return withSnippet(source, offset, `Syntax error: ${match[3]}`)
}

/** Maps @bufbuild/cel's terse runtime errors onto the texts cel-go (and so Porch) prints. */
function runtimeMessage(message: string, compiled: { usesRepository: boolean }, bindings: CelBindings): string {
  const missingKey = /^field not found: (.*)$/s.exec(message)
  if (missingKey) return `no such key: ${missingKey[1]}`
  if (message.trim() === 'unresolved attribute' && compiled.usesRepository && bindings.repository === undefined) {
    return 'no such attribute(s): repository'
  }
  const unbound = /^unbound function: (.*)$/s.exec(message)
  if (unbound) return `undeclared reference to '${unbound[1]}' (in container '')`
  return message
}

function conversionError(value: unknown): string {
  if (typeof value === 'bigint') return "unsupported type conversion from 'int' to string"
  if (typeof value === 'boolean') return "type conversion error from bool to 'string'"
  if (value === null) return "type conversion error from 'null_type' to 'string'"
  return `type conversion error from '${celTypeName(value)}' to 'string'`
}

function celTypeName(value: unknown): string {
  if (typeof value === 'number') return 'double'
  if (value instanceof Uint8Array) return 'bytes'
  if (isCelUint(value)) return 'uint'
  if (isCelList(value)) return 'list'
  if (isCelMap(value)) return 'map'
  return typeof value
}

function formatCount(n: number): string {
  return n >= 1e15 ? n.toExponential(2) : String(Math.round(n))
}
