/**
 * `kpt-variants`: the command line. Parses argv with commander, loads the
 * command's module only when it runs (start-up stays small), and turns every
 * expected failure into a one-line message and an exit code; `bin/kpt-variants`
 * only sets `process.exitCode` from `cli()`.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import type { PublishOptions } from './commands/publish.js'
import type { RenderOptions } from './commands/render.js'
import type { StatusOptions } from './commands/status.js'
import type { DepsOptions } from './commands/deps.js'
import type { RolloutAction, RolloutOptions } from './commands/rollout.js'
import { UsageError } from './commands/cli-io.js'
import { addControllerCommand } from './commands/controller-cli.js'
import { allowDeletionsHelp, maxDeletionsHelp, parseDeletionLimitOption } from './commands/deletion-options.js'
import type { CliIO } from './commands/cli-io.js'
import { version } from './util/version.js'

/** Runs the command line; resolves to the exit code. */
// eslint-disable-next-line max-lines-per-function -- commander's declaration of every command and option, one table
export async function cli(argv: readonly string[], given: CliIO): Promise<number> {
  // --debug, anywhere: an unexpected error's stack trace is printed (a user's mistake never has one).
  const debug = argv.includes('--debug')
  const io: CliIO = debug ? { ...given, debug } : given
  let exitCode = 0
  const program = new Command('kpt-variants')
    .description(
      "Porch's PackageVariant and PackageVariantSet automation for plain kpt and git: render a fleet of package variants in one command.",
    )
    .version(version, '-v, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(text),
    })
    .showHelpAfterError('(see kpt-variants --help)')
    .addHelpText(
      'after',
      '\nEvery command takes --debug: an unexpected failure then prints where it happened (a stack trace) after its one line.',
    )

  program
    .command('render')
    .description(
      'render every PackageVariant of a fleet (PackageVariantSets expanded) into downstream packages: clone new ones, ' +
        '3-way merge upstream updates into existing ones, apply package context, pipeline and injection, check dependencies, run the pipeline',
    )
    .argument(
      '[FLEET]',
      'directory of YAML: Repositories, PackageVariantSets, PackageVariants, targets, objects to inject, catalogs (or --cluster)',
    )
    .option(
      '--cluster',
      "read the fleet from the Kubernetes API server of the kubeconfig's context instead of a directory, and write PackageVariant(Set) status back (docs/cluster.md)",
    )
    .option(
      '--kubeconfig <PATH>',
      "with --cluster, the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the pod's service account)",
    )
    .option('--context <NAME>', "with --cluster, the kubeconfig's context to use (default: its current context)")
    .option('-o, --out <DIR>', 'write each variant to DIR/<downstream repo>/<downstream package>')
    .option(
      '--git',
      'propose each new or changed package as a draft branch drafts/<package>/<workspace> of its downstream Repository (spec.git), as Porch does',
    )
    .option(
      '--publish',
      'with --git, publish the drafts of the run, as far as Rollouts allow: merge into the branch, tag <package>/v<N>, delete the draft',
    )
    .option(
      '--publish-conflicts',
      'with --publish, publish drafts that report conflicts too (else they wait for review)',
    )
    .option(
      '--publish-deletions',
      'with --publish, publish drafts that delete a package too (else they wait for review)',
    )
    .option('--skip-rollout', 'publish (with --out: write) every change at once, as if no Rollout paced the fleet')
    .option('--max-deletions <N|P%>', maxDeletionsHelp, parseDeletionLimitOption)
    .option('--allow-deletions', allowDeletionsHelp)
    .option(
      '--now <RFC3339>',
      'the time the run acts at: Rollout gates and windows, the dates of the commits and tags it writes (default: now)',
    )
    .option(
      '--cache <DIR>',
      'where the record of earlier renders, the clones of remote upstream repositories and (with --git) the working clones of downstream repositories are kept (default: ~/.cache/kpt-variants)',
    )
    .option(
      '--force',
      'render every variant, even one whose inputs and package are unchanged since the last render (which is otherwise skipped)',
    )
    .option(
      '--lock-timeout <seconds>',
      'how long to wait for another run holding a repository (a --git downstream, or a remote upstream being fetched)',
      parseSeconds,
      60,
    )
    .option('--dry-run', 'write nothing; show what would be created, updated, deleted or left unchanged')
    .option('--diff', 'with --dry-run, print a unified diff of every change')
    .option('--json', 'print a machine-readable report on stdout')
    .addOption(
      new Option(
        '--format <format>',
        'markdown: also print the summary as GitHub-flavoured Markdown on stdout, a pull-request comment (with --dry-run, every diff in it, cut to fit 65,536 characters)',
      )
        .choices(['text', 'markdown'])
        .default('text'),
    )
    .option(
      '--report <FILE>',
      "write the fleet page, one self-contained HTML file: the variants as a matrix, each one's detail and (with --dry-run) diff (docs/reports.md)",
    )
    .addOption(
      new Option(
        '--on-conflict <policy>',
        'a field changed both upstream and downstream: take upstream, keep downstream, or fail the variant (always reported)',
      )
        .choices(['upstream', 'downstream', 'fail'])
        .default('upstream'),
    )
    .option('--shard <I/N>', 'render only the variants whose identity hashes to I of N (0 <= I < N)', parseShard)
    .option(
      '--threads <n>',
      'render on n threads (default for a big fleet with no record of an earlier run: one per CPU, or one per two CPUs into an empty directory; else one)',
      parseThreads,
    )
    .option(
      '-n, --namespace <NS>',
      'the namespace of fleet objects without one, as kubectl apply would put them (default: default); with --cluster, the only namespace read (default: all)',
    )
    .option('--allow-exec', 'let downstream pipelines run exec: functions (as kpt fn render --allow-exec)')
    .addOption(
      new Option(
        '--image-functions <policy>',
        'run a downstream pipeline with image: functions (needs a container engine), or skip it: the package keeps its pipeline for kpt fn render to run later',
      )
        .choices(['run', 'skip'])
        .default('run'),
    )
    .addOption(
      new Option(
        '--dependencies <mode>',
        'what packages need (PackageManifest dependencies), per downstream repository: install it (clone missing dependencies from their source, update those too old, remove those no longer needed), only check it (report the plan), or skip the check (docs/package-dependencies.md)',
      )
        .choices(['install', 'check', 'off'])
        .default('install'),
    )
    .option('--no-progress', 'never draw a progress bar')
    .addHelpText(
      'after',
      `
Examples:
  kpt-variants render fleet/ --out rendered/
  kpt-variants render fleet/ --out rendered/ --dry-run --diff
  kpt-variants render fleet/ --out rendered/ --dry-run --format markdown > comment.md
  kpt-variants render fleet/ --out rendered/ --dry-run --report fleet.html
  kpt-variants render fleet/ --out rendered/ --shard 0/4 --json
  kpt-variants render fleet/ --git
  kpt-variants render fleet/ --git --publish
  kpt-variants render --cluster --git
  kpt-variants render --cluster --context kind-mgmt -n fleet --out rendered/ --dry-run

Exit status: 0 when every variant rendered, 1 when any failed (the others are
still written) or, with --cluster, a status could not be written, 2 on a usage
error or when the cluster cannot be read (no kubeconfig, server unreachable,
a list forbidden).`,
    )
    .action(async (fleet: string | undefined, options: RenderOptions) => {
      const { renderCommand } = await import('./commands/render.js')
      exitCode = await renderCommand(fleet, options, io)
    })

  program
    .command('publish')
    .description(
      "publish open drafts of a downstream repository, as Porch's approve: each becomes a commit on the branch tagged <package>/v<N> " +
        '(the next revision), and its draft branch is deleted; with --fleet, of every repository of the fleet (or one), as its Rollouts allow',
    )
    .argument(
      '[REPO]',
      'the repository: a URL or path git can clone, or with --fleet the name of a Repository of the fleet (with --fleet, default: every one)',
    )
    .argument('[PACKAGE...]', 'the packages to publish (default: every open draft)')
    .option(
      '--fleet <DIR>',
      "publish the fleet DIR's drafts, as far as its Rollouts allow: REPO (a Repository of the fleet) or every repository, in one run",
    )
    .option(
      '--selector <SELECTOR>',
      "with --fleet, only variants whose target's labels match (kubectl's form: tier=canary,region in (eu-west1))",
    )
    .option('--skip-rollout', 'with --fleet, publish as if no Rollout paced the fleet')
    .option(
      '--now <RFC3339>',
      'the time the run acts at: Rollout gates and windows, the dates of the commits and tags it writes (default: now)',
    )
    .option('--dry-run', 'with --fleet, write nothing: show what would be published and what is held back')
    .option(
      '--force',
      'publish a draft whose Kptfile readiness gates are not all True, and with --fleet one whose PackageVariant is gone or renders another package now, too (else refused)',
    )
    .option('--max-deletions <N|P%>', `with --fleet, ${maxDeletionsHelp}`, parseDeletionLimitOption)
    .option('--allow-deletions', `with --fleet, ${allowDeletionsHelp}`)
    .option('-n, --namespace <NS>', 'with --fleet, the namespace of fleet objects without one (default: default)')
    .option('--branch <BRANCH>', 'the published branch of a REPO given as a URL (default: main)')
    .option('--directory <DIR>', 'the directory of the packages in a REPO given as a URL (default: the root)')
    .option('--cache <DIR>', 'where the working clones are kept (default: ~/.cache/kpt-variants)')
    .option('--lock-timeout <seconds>', 'how long to wait for another run holding a repository', parseSeconds, 60)
    .option('--json', 'print a machine-readable report on stdout')
    .addHelpText(
      'after',
      `
Examples:
  kpt-variants publish ../repos/edge-01.git
  kpt-variants publish edge-01 nginx --fleet fleet/
  kpt-variants publish --fleet fleet/
  kpt-variants publish --fleet fleet/ --selector region=eu-west1 --dry-run

Exit status: 0 when every draft it took was published (a draft a Rollout
holds back is reported, not a failure), 1 when one was not, 2 on a usage error.`,
    )
    .action(async (repo: string | undefined, packages: string[], options: PublishOptions) => {
      const { publishCommand } = await import('./commands/publish.js')
      exitCode = await publishCommand(repo, packages, options, io)
    })

  program
    .command('status')
    .description(
      'one line per variant of a fleet, read from its downstream repositories (what porchctl rpkg get shows) or with --out from the output directory: published revision, open draft, upstream revision current or behind, local edits, last failure; and the dependencies a render installed',
    )
    .argument('<FLEET>', 'the fleet directory, as given to render')
    .option(
      '-o, --out <DIR>',
      'read the output directory a render --out DIR wrote instead of the downstream repositories',
    )
    .option(
      '-n, --namespace <NS>',
      'the namespace of fleet objects without one, as kubectl apply would put them (default: default)',
    )
    .option('--cache <DIR>', 'where the working clones are kept (default: ~/.cache/kpt-variants)')
    .option('--lock-timeout <seconds>', 'how long to wait for another run holding a repository', parseSeconds, 60)
    .option('--json', 'print a machine-readable report on stdout')
    .option(
      '--html <FILE>',
      "write the fleet page, one self-contained HTML file: the variants as a matrix and each one's detail (docs/reports.md)",
    )
    .action(async (fleet: string, options: StatusOptions) => {
      const { statusCommand } = await import('./commands/status.js')
      exitCode = await statusCommand(fleet, options, io)
    })

  program
    .command('deps')
    .description(
      "what a downstream repository holds, as a tree of packages: each one's version, whether a PackageVariant, a dependency or a person put it there, what it needs and what needs it; why a package is there, whether it can be deleted, and what is out of date (docs/package-dependencies.md)",
    )
    .argument('[REPO]', 'the downstream Repository of the fleet (with --outdated, default: every one)')
    .option('--fleet <DIR>', 'the fleet directory, as given to render')
    .option('--cluster', "read the fleet from the Kubernetes API server of the kubeconfig's context")
    .option('--kubeconfig <PATH>', 'with --cluster, the kubeconfig')
    .option('--context <NAME>', "with --cluster, the kubeconfig's context to use")
    .option(
      '-o, --out <DIR>',
      'read the output directory a render --out DIR wrote instead of the downstream repositories',
    )
    .option('--why <PKG>', 'why PKG is in the repository: every chain of packages that need it')
    .option('--can-delete <PKG>', 'whether PKG can be deleted: exit 1, naming what needs it, when not')
    .option('--outdated', 'every package below the newest version its constraints allow, or the newest published')
    .option('--json', 'print a machine-readable answer on stdout')
    .option('-n, --namespace <NS>', 'the namespace of fleet objects without one (default: default)')
    .option('--cache <DIR>', 'where the working clones are kept (default: ~/.cache/kpt-variants)')
    .option('--lock-timeout <seconds>', 'how long to wait for another run holding a repository', parseSeconds, 60)
    .addHelpText(
      'after',
      `
Examples:
  kpt-variants deps edge-05 --fleet fleet/
  kpt-variants deps edge-05 --fleet fleet/ --why cert-manager
  kpt-variants deps edge-05 --fleet fleet/ --out rendered/ --can-delete cert-manager
  kpt-variants deps --fleet fleet/ --outdated --json

Exit status: 0, or 1 when --can-delete says the package is needed; 2 on a usage error.`,
    )
    .action(async (repo: string | undefined, options: DepsOptions) => {
      const { depsCommand } = await import('./commands/deps.js')
      exitCode = await depsCommand(repo, options, io)
    })

  addControllerCommand(program, io, (code) => (exitCode = code))

  program
    .command('demo')
    .description(
      'lay the example fleet out in DIR to try kpt-variants with: a blueprint git repository (nginx and cert-manager, two revisions each), a fleet of a dozen clusters and an empty git repository per cluster',
    )
    .argument('<DIR>', 'a new or empty directory')
    .action(async (dir: string) => {
      const { demoCommand } = await import('./commands/demo.js')
      exitCode = await demoCommand(dir, io)
    })

  const rollout = program
    .command('rollout')
    .description("a Rollout's state, and the records a person adds to it: approvals, pauses (docs/rollouts.md)")
    .addHelpText(
      'after',
      `
Examples:
  kpt-variants rollout status edge-monitor --fleet fleet/
  kpt-variants rollout approve edge-monitor eu --fleet fleet/     # then commit fleet/
  kpt-variants rollout pause edge-monitor --cluster

In a fleet directory the Rollout's file is edited in place (commit it as any
fleet change); with --cluster the object is patched.`,
    )
  const rolloutAction = (action: RolloutAction, withStep: boolean) => {
    const command = rollout.command(action).argument('<NAME>', 'the Rollout (NAME or NAMESPACE/NAME)')
    if (withStep) command.argument('<STEP>', 'the step to let start, for the upstream revision the set renders now')
    command
      .option('--fleet <DIR>', 'the fleet directory the Rollout is in')
      .option('--cluster', "the Rollout is in the Kubernetes API server of the kubeconfig's context")
      .option('--kubeconfig <PATH>', 'with --cluster, the kubeconfig')
      .option('--context <NAME>', "with --cluster, the kubeconfig's context to use")
      .option(
        '-n, --namespace <NS>',
        "the Rollout's namespace, and the namespace of fleet objects without one (default: default)",
      )
      .option('--cache <DIR>', 'where the working clones are kept (default: ~/.cache/kpt-variants)')
      .option('--lock-timeout <seconds>', 'how long to wait for another run holding a repository', parseSeconds, 60)
      .option(
        '--now <RFC3339>',
        'the time to act at: gates and windows (status), the approval time (approve) (default: now)',
      )
    if (action === 'status') command.option('--json', 'print a machine-readable report on stdout')
    command.action(async (...args: unknown[]) => {
      const name = args[0] as string
      const step = withStep ? (args[1] as string) : undefined
      const options = args[withStep ? 2 : 1] as RolloutOptions
      const { rolloutCommand } = await import('./commands/rollout.js')
      exitCode = await rolloutCommand(action, name, step, options, io)
    })
  }
  rolloutAction('status', false)
  rolloutAction('approve', true)
  rolloutAction('pause', false)
  rolloutAction('resume', false)

  try {
    await program.parseAsync(['node', 'kpt-variants', ...argv.filter((arg) => arg !== '--debug')])
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with exit code 0; usage errors were printed by commander.
      return err.exitCode === 0 ? 0 : 2
    }
    if (err instanceof UsageError) {
      io.stderr(`kpt-variants: ${err.message}\n`)
      return err.exitCode
    }
    // Anything else failed on the way (a repository that cannot be reached, a file that cannot be written): one line.
    const message = err instanceof Error ? err.message : String(err)
    io.stderr(`kpt-variants: ${message.split('\n')[0]}${debug ? '' : ' (--debug prints where it failed)'}\n`)
    if (debug && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`)
    return 1
  }
  return exitCode
}

/** Parses a positive thread count. */
function parseThreads(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a whole number of threads, at least 1')
  return n
}

/** Parses a number of seconds (0 or more). */
function parseSeconds(value: string): number {
  const n = Number(value)
  if (!/^\d+(\.\d+)?$/.test(value)) throw new InvalidArgumentError('expected a number of seconds')
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
