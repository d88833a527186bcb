/** The deletion guard's options (plan/deletion-guard.ts), for every command that removes packages; small, as cli.ts loads it at start-up. */
import { InvalidArgumentError } from 'commander'
import type { DeletionGuardSettings, DeletionLimit } from '../plan/deletion-guard.js'

/** Parses `--max-deletions N|P%`: a number of packages, or a share of a set's packages. */
export function parseDeletionLimitOption(value: string): { count: number } | { percent: number } {
  const match = /^(\d+)(%?)$/.exec(value.trim())
  const n = Number(match?.[1])
  if (!match || (match[2] === '%' && n > 100))
    throw new InvalidArgumentError('expected a number of packages (3) or a share of a set (25%)')
  return match[2] === '%' ? { percent: n } : { count: n }
}

export const maxDeletionsHelp =
  'the deletion guard: a PackageVariantSet that would lose more than N of its packages (or P% of them, and at least 2) is held, nothing of it written (default: 50%)'
export const allowDeletionsHelp = 'no deletion guard for this run: a set may lose any number of its packages'

/** The deletion guard's settings of `--max-deletions` and `--allow-deletions` (none: the default guard). */
export function deletionGuardOf(options: { maxDeletions?: DeletionLimit; allowDeletions?: boolean }): {
  deletionGuard?: DeletionGuardSettings
} {
  if (options.allowDeletions) return { deletionGuard: { allowDeletions: true } }
  if (options.maxDeletions) return { deletionGuard: { maxDeletions: options.maxDeletions } }
  return {}
}
