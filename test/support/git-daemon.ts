/**
 * `git daemon` serving a directory of repositories over git:// (read and push) on one address:
 * how the pods of a test node reach the tests' repositories, as they would reach a git host.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePorts } from './ports.js'
import { until } from './node-cluster.js'
import { execa } from 'execa'

export class GitDaemon {
  private constructor(
    readonly child: ChildProcess,
    readonly address: string,
    readonly port: number,
    readonly log: string,
  ) {}

  /** Serves every repository under `base` on `address`; resolves once `git ls-remote` reaches it. */
  static async start(base: string, address: string, probe: string): Promise<GitDaemon> {
    const [port] = await freePorts(1)
    const log = join(base, '..', 'git-daemon.log')
    const out = openSync(log, 'a')
    const child = spawn(
      'git',
      [
        'daemon',
        '--export-all',
        '--enable=receive-pack',
        '--reuseaddr',
        `--base-path=${base}`,
        `--listen=${address}`,
        `--port=${port}`,
        '--verbose',
        base,
      ],
      { stdio: ['ignore', out, out] },
    )
    closeSync(out)
    const daemon = new GitDaemon(child, address, port!, log)
    await until(
      async () => (await execa('git', ['ls-remote', daemon.url(probe)], { reject: false })).exitCode === 0,
      `git daemon not serving ${probe}: ${readFileSync(log, 'utf8')}`,
      20_000,
    )
    return daemon
  }

  /** The URL of repository `name` (a path under the base). */
  url(name: string): string {
    return `git://${this.address}:${this.port}/${name}`
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    this.child.kill('SIGTERM')
    await exited
  }
}
