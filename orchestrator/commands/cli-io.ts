/** What a command gets from the command line (cli.ts): its streams and environment, and the error that ends it with a message. */

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
  /** `--debug`: an internal error's stack is printed (and kept in `--json`). */
  debug?: boolean
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
