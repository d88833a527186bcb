/**
 * One thread's share of a run's variants: every count-th variant of the plan
 * from its index on, rendered in plan order and staged for the main thread.
 */
import type { Pending } from './render-variant.js'
import { VariantContext } from './render-variant.js'
import type { Run } from './setup.js'
import { stagedDir, stages } from '../output/output.js'
import type { Output } from '../output/output.js'
import { failure } from '../report/failure.js'

/** Below this many variants per thread, more threads cost more than they save. */
const variantsPerThread = 64

/** How many threads share `variants`: at most `threads`, and few enough that each gets a worthwhile share. */
export function sharesOf(variants: number, threads: number): number {
  return Math.max(1, Math.min(threads, Math.floor(variants / variantsPerThread)))
}

/**
 * Renders share `index` of the planned variants when `threads` threads share
 * them (every count-th one, count from `sharesOf`), in plan order; none when
 * the plan gives this thread no share.
 */
export async function renderShare(
  run: Run,
  index: number,
  threads: number,
  onDone: (pending: Pending) => void,
): Promise<Pending[]> {
  const { plan, output } = run
  const count = sharesOf(plan.variants.length, threads)
  const context = new VariantContext(run.fleet, run.sources, run.settings, output, run.scratch, run.memo)
  const done: Pending[] = []
  if (index >= count) return done
  const share = plan.variants
    .filter((_, i) => i % count === index)
    .map((variant) => ({ variant, path: `${variant.downstream.repo}/${variant.downstream.package}` }))
  const recorded = new Map<string, string>()
  for (const { variant, path } of share) {
    const stat = run.memo?.recorded(variant, path)?.stat
    if (stat !== undefined) recorded.set(path, stat)
  }
  await output.prefetch(
    share.map((s) => s.path),
    { alone: count === 1, recorded },
  )
  for (let i = index; i < plan.variants.length; i += count) {
    const pending = await context.render(plan.variants[i]!)
    pending.order = i
    done.push(pending)
    onDone(pending)
  }
  await failUnstaged(output, done)
  return done
}

/** Waits for the packages staged in the background since the last settle; one that could not be written fails its variant and is never committed. */
export async function failUnstaged(output: Output, pending: readonly Pending[]): Promise<void> {
  // An output without staging holds its staged packages in memory: none can have failed.
  if (!stages(output)) return
  const unwritten = await output.settle()
  for (const p of pending) {
    const dir = p.staged && stagedDir(p.staged)
    const error = dir === undefined ? undefined : unwritten.get(dir)
    if (error === undefined) continue
    output.discard(p.staged!)
    delete p.staged
    delete p.memo
    p.report.status = 'failed'
    p.report.reasons.push(failure('WriteFailed', `cannot write the package: ${error}`))
  }
}
