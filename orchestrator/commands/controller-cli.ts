/**
 * The `controller` command's options (commander), beside cli.ts: the
 * command's module (controller.ts, with the client library) loads only when
 * it runs.
 */
import { maxDeletionsHelp, parseDeletionLimitOption } from './deletion-options.js'
import { InvalidArgumentError, Option } from 'commander'
import type { Command } from 'commander'
import type { ControllerOptions } from './controller.js'
import type { CliIO } from './cli-io.js'

/** Adds `kpt-variants controller` to `program`; `done` gets its exit code. */
// eslint-disable-next-line max-lines-per-function -- commander's declaration of the command's options, one table
export function addControllerCommand(program: Command, io: CliIO, done: (exitCode: number) => void): void {
  program
    .command('controller')
    .description(
      'watch the fleet in the Kubernetes API server (as render --cluster reads it) and render, after each change, only the PackageVariants it affects; ' +
        'one replica at a time leads through a Lease; a full render at the start and every --resync; upstream repositories polled or called by a webhook (docs/cluster.md)',
    )
    .option(
      '--kubeconfig <PATH>',
      "the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the pod's service account)",
    )
    .option('--context <NAME>', "the kubeconfig's context to use (default: its current context)")
    .option('-n, --namespace <NS>', 'watch only this namespace (and cluster-scoped kinds); default: all')
    .option('-o, --out <DIR>', 'write each variant to DIR/<downstream repo>/<downstream package>')
    .option(
      '--git',
      'propose each new or changed package as a draft branch drafts/<package>/<workspace> of its downstream Repository, as Porch does',
    )
    .option(
      '--cache <DIR>',
      'where the record of earlier renders and the clones of repositories are kept (default: ~/.cache/kpt-variants)',
    )
    .option('--lock-timeout <duration>', 'how long to wait for another run holding a repository', parseDuration, 60_000)
    .addOption(
      new Option(
        '--on-conflict <policy>',
        'a field changed both upstream and downstream: take upstream, keep downstream, or fail the variant',
      )
        .choices(['upstream', 'downstream', 'fail'])
        .default('upstream'),
    )
    .option('--allow-exec', 'let downstream pipelines run exec: functions')
    .addOption(
      new Option('--image-functions <policy>', 'run a downstream pipeline with image: functions, or skip it')
        .choices(['run', 'skip'])
        .default('run'),
    )
    .addOption(
      new Option('--dependencies <mode>', "carry out each repository's dependency plan, only check it, or skip it")
        .choices(['install', 'check', 'off'])
        .default('install'),
    )
    .option('--threads <n>', 'render threads (default: as render chooses)', parsePositive)
    .option('--max-deletions <N|P%>', maxDeletionsHelp, parseDeletionLimitOption)
    .option('--allow-deletions', "no deletion guard: a cycle may remove any number of a set's packages")
    .option(
      '--resync <duration>',
      'a full render this long after the last one: the safety net for what no watch sees',
      parseDuration,
      600_000,
    )
    .option(
      '--poll <duration>',
      'list the upstream repositories this often (0: only at a resync or a webhook call)',
      parseDuration,
      60_000,
    )
    .option('--listen <ADDR>', 'serve POST /webhook (a git push), GET /healthz and GET /readyz on HOST:PORT or :PORT')
    .option(
      '--webhook-secret-file <FILE>',
      'a webhook call must carry this secret: X-Hub-Signature-256 (GitHub, Gitea) or X-Gitlab-Token (GitLab)',
    )
    .option('--no-leader-election', 'run without a Lease (one replica only)')
    .option(
      '--lease <NAMESPACE/NAME>',
      'the coordination.k8s.io Lease the replicas share',
      'kpt-variants/kpt-variants-controller',
    )
    .option(
      '--lease-duration <duration>',
      'how long a lease lasts without renewal: a standby takes over within it (whole seconds)',
      parseDuration,
      15_000,
    )
    .option(
      '--renew-deadline <duration>',
      'a leader that could not renew for this long stops leading',
      parseDuration,
      10_000,
    )
    .option(
      '--retry-period <duration>',
      'how often the leader renews and a standby reads the lease',
      parseDuration,
      2_000,
    )
    .option('--identity <NAME>', "this replica's name in the lease (default: the host name and a random suffix)")
    .option(
      '--label-pod <NAMESPACE/NAME>',
      'while this replica leads, label its pod kpt-variants.dev/leader=true (a Service selecting it reaches the leader)',
    )
    .option(
      '--json',
      'print one line of JSON per cycle on stdout: what started it, what it rendered, the status written',
    )
    .addHelpText(
      'after',
      `
Examples:
  kpt-variants controller --git
  kpt-variants controller --git --listen :8080 --webhook-secret-file /etc/kpt-variants/webhook/secret
  kpt-variants controller --context kind-mgmt -n fleet --out rendered/ --no-leader-election

Durations: 500ms, 30s, 10m, 1h, or a number of seconds. SIGTERM stops after
the cycle under way (a leader gives its lease up); SIGHUP renders everything now.

Exit status: 0 when stopped, 1 when this replica lost its lease (it never
renders again: start it anew), 2 on a usage error or when the cluster cannot
be read at the start.`,
    )
    .action(async (options: ControllerOptions) => {
      const { controllerCommand } = await import('./controller.js')
      done(await controllerCommand(options, io))
    })
}

/** `500ms`, `30s`, `10m`, `1h`, or seconds: milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value)
  if (!match) throw new InvalidArgumentError('expected a duration: 500ms, 30s, 10m, 1h, or a number of seconds')
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
  return Math.round(Number(match[1]) * unit)
}

function parsePositive(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a whole number, at least 1')
  return n
}
