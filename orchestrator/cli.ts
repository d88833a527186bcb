/**
 * `kpt-variants`: the command line. Parses argv with commander, loads the
 * command's module only when it runs (start-up stays small), and turns every
 * expected failure into a one-line message and an exit code; `bin/kpt-variants`
 * only sets `process.exitCode` from `cli()`.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import type { RenderOptions } from './commands/render.js'

/** The streams and environment a run uses; tests pass their own. */
export interface CliIO {
  stdout(text: string): void
  stderr(text: string): void
  /** True when stderr is a terminal: progress bars are drawn there. */
  stderrIsTTY: boolean
  /** The stream behind `stderr`, where a progress bar draws (only when it is a terminal). */
  stderrStream?: NodeJS.WritableStream
  env: Readonly<Record<string, string | undefined>>
  cwd: string
}

/** An expected failure: the message is shown without a stack trace. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message)
    this.name = 'UsageError'
  }
}

const version = '0.1.0'

/** Runs the command line; resolves to the exit code. */
export async function cli(argv: readonly string[], io: CliIO): Promise<number> {
  let exitCode = 0
  const program = new Command('kpt-variants')
    .description("Porch's PackageVariant and PackageVariantSet automation for plain kpt and git: render a fleet of package variants in one command.")
    .version(version, '-v, --version')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr, outputError: (text, write) => write(text) })
    .showHelpAfterError('(see kpt-variants --help)')

  program
    .command('render')
    .description(
      'render every PackageVariant of a fleet (PackageVariantSets expanded) into downstream packages: clone new ones, ' +
        '3-way merge upstream updates into existing ones, apply package context, pipeline and injection, check dependencies, run the pipeline',
    )
    .argument('<FLEET>', 'directory of YAML: Repositories, PackageVariantSets, PackageVariants, targets, objects to inject, catalogs')
    .requiredOption('-o, --out <DIR>', 'write each variant to DIR/<downstream repo>/<downstream package>')
    .option('--dry-run', 'write nothing; show what would be created, updated, deleted or left unchanged')
    .option('--diff', 'with --dry-run, print a unified diff of every change')
    .option('--json', 'print a machine-readable report on stdout')
    .addOption(
      new Option('--on-conflict <policy>', 'a field changed both upstream and downstream: take upstream, keep downstream, or fail the variant (always reported)')
        .choices(['upstream', 'downstream', 'fail'])
        .default('upstream'),
    )
    .option('--shard <I/N>', 'render only the variants whose identity hashes to I of N (0 <= I < N)', parseShard)
    .option('--threads <n>', 'render on n threads (default: one per CPU; small fleets use fewer)', parseThreads)
    .option('--allow-exec', 'let downstream pipelines run exec: functions (as kpt fn render --allow-exec)')
    .option('--no-progress', 'never draw a progress bar')
    .addHelpText(
      'after',
      `
Examples:
  kpt-variants render fleet/ --out rendered/
  kpt-variants render fleet/ --out rendered/ --dry-run --diff
  kpt-variants render fleet/ --out rendered/ --shard 0/4 --json

Exit status: 0 when every variant rendered, 1 when any failed (the others are
still written), 2 on a usage error.`,
    )
    .action(async (fleet: string, options: RenderOptions) => {
      const { renderCommand } = await import('./commands/render.js')
      exitCode = await renderCommand(fleet, options, io)
    })

  try {
    await program.parseAsync(['node', 'kpt-variants', ...argv])
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with exit code 0; usage errors were printed by commander.
      return err.exitCode === 0 ? 0 : 2
    }
    if (err instanceof UsageError) {
      io.stderr(`kpt-variants: ${err.message}\n`)
      return err.exitCode
    }
    throw err
  }
  return exitCode
}

/** Parses a positive thread count. */
function parseThreads(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a whole number of threads, at least 1')
  return n
}

/** Parses `I/N`. */
function parseShard(value: string): { index: number; count: number } {
  const match = /^(\d+)\/(\d+)$/.exec(value)
  const index = Number(match?.[1])
  const count = Number(match?.[2])
  if (!match || count < 1 || index >= count) throw new InvalidArgumentError('expected I/N with 0 <= I < N, e.g. 0/4')
  return { index, count }
}
