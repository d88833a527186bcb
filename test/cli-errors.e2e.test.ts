/**
 * Every command given a wrong argument, a missing path, an unreachable
 * repository or a malformed fleet: one clear line, exit 2 for a usage error
 * and 1 for a failure, never a stack trace (unless --debug asks for one).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBlueprints, fleetFiles, threeClusters } from './support/fleet.js'
import { writeTree } from './support/git-repo.js'
import { runCli } from './support/cli-run.js'

let dir: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-cli-errors-'))
  await createBlueprints(join(dir, 'repos', 'blueprints'))
  writeTree(join(dir, 'fleet'), fleetFiles({ clusters: threeClusters }))
  // A fleet with a file that is not YAML, and one whose upstream repository is nowhere.
  writeTree(join(dir, 'malformed'), { ...fleetFiles({ clusters: threeClusters }), 'broken.yaml': 'kind: [unclosed\n' })
  writeTree(join(dir, 'unreachable'), {
    ...fleetFiles({ clusters: threeClusters }),
    'repositories.yaml': fleetFiles({ clusters: threeClusters })['repositories.yaml']!.replace(
      'repo: ../repos/blueprints',
      'repo: ../repos/nowhere',
    ),
  })
  mkdirSync(join(dir, 'empty-dir'))
  writeFileSync(join(dir, 'a-file'), 'not a directory\n')
}, 60_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const run = (args: string[]) => runCli(dir, args)

/** A stack trace's frame, as Node prints it. */
const stackFrame = /^\s+at .+[:(]/m

const cases: [string, string[], 1 | 2, RegExp][] = [
  ['an unknown command', ['frob'], 2, /^error: unknown command 'frob'/],
  ['an unknown option', ['render', 'fleet', '--out', 'out', '--frob'], 2, /^error: unknown option '--frob'/],
  ['render without a fleet', ['render', '--out', 'out'], 2, /^kpt-variants: give a FLEET directory, or --cluster$/m],
  [
    'render of a fleet that does not exist',
    ['render', 'nowhere', '--out', 'out'],
    2,
    /^kpt-variants: fleet directory nowhere does not exist$/m,
  ],
  [
    'render of a file as a fleet',
    ['render', 'a-file', '--out', 'out'],
    2,
    /^kpt-variants: fleet directory a-file does not exist$/m,
  ],
  ['render into a file', ['render', 'fleet', '--out', 'a-file'], 2, /^kpt-variants: --out a-file is not a directory$/m],
  [
    'render with both outputs',
    ['render', 'fleet', '--out', 'out', '--git'],
    2,
    /^kpt-variants: give either --out DIR or --git$/m,
  ],
  [
    'render with a bad shard',
    ['render', 'fleet', '--out', 'out', '--shard', '4/4'],
    2,
    /^error: option '--shard <I\/N>' argument '4\/4' is invalid/,
  ],
  [
    'render --cluster without a kubeconfig',
    ['render', '--cluster', '--kubeconfig', 'nowhere', '--out', 'out'],
    2,
    /^kpt-variants: kubeconfig nowhere does not exist$/m,
  ],
  ['render of a malformed fleet', ['render', 'malformed', '--out', 'out-malformed'], 1, /broken\.yaml/],
  [
    'render whose upstream repository cannot be reached',
    ['render', 'unreachable', '--out', 'out-unreachable'],
    1,
    /upstream repository "blueprints" cannot be read/,
  ],
  [
    'publish without a repository',
    ['publish'],
    2,
    /^kpt-variants: give a REPO to publish, or --fleet DIR to publish the drafts of every repository of a fleet$/m,
  ],
  [
    'publish of a fleet directory',
    ['publish', 'fleet'],
    2,
    /^kpt-variants: fleet is a fleet directory, not a git repository: kpt-variants publish --fleet fleet publishes its repositories' drafts$/m,
  ],
  [
    'publish of a plain directory',
    ['publish', 'empty-dir'],
    2,
    /^kpt-variants: empty-dir is a directory but not a git repository$/m,
  ],
  [
    'publish of a repository that does not exist',
    ['publish', join('repos', 'nowhere')],
    1,
    /^kpt-variants: repository repos\/nowhere cannot be opened: repository '.*repos\/nowhere' does not exist \(--debug prints where it failed\)$/m,
  ],
  [
    'publish --fleet of a fleet that does not exist',
    ['publish', 'edge-01', '--fleet', 'nowhere'],
    2,
    /^kpt-variants: fleet directory nowhere does not exist$/m,
  ],
  [
    'publish of a Repository the fleet does not have',
    ['publish', 'edge-09', '--fleet', 'fleet'],
    2,
    /^kpt-variants: no Repository named "edge-09" in the fleet /m,
  ],
  [
    'status of a fleet that does not exist',
    ['status', 'nowhere'],
    2,
    /^kpt-variants: fleet directory nowhere does not exist$/m,
  ],
  [
    'status with a bad lock timeout',
    ['status', 'fleet', '--lock-timeout', 'soon'],
    2,
    /^error: option '--lock-timeout <seconds>' argument 'soon' is invalid/,
  ],
  [
    'demo into a directory that is not empty',
    ['demo', 'fleet'],
    2,
    /^kpt-variants: fleet is not empty: the demo is laid out in a new or empty directory$/m,
  ],
]

describe('a wrong command line gets one clear line and no stack trace', () => {
  test.each(cases)('%s', async (_, args, exitCode, message) => {
    const result = await run(args)
    expect(result.exitCode).toBe(exitCode)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toMatch(stackFrame)
    expect(result.stdout).not.toMatch(stackFrame)
  })

  test('--debug prints where an unexpected failure happened', async () => {
    const result = await run(['publish', join('repos', 'nowhere'), '--debug'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^kpt-variants: repository repos\/nowhere cannot be opened: /m)
    expect(result.stderr).toMatch(stackFrame)
  })
})
