/** The progress bar on a terminal (cli-progress), drawn on stderr while variants render. */
import cliProgress from 'cli-progress'
import type { VariantReport } from './report.js'

/** Progress callbacks of a render (the progress bar). */
export interface RenderProgress {
  start(total: number): void
  advance(report: VariantReport): void
}

/** A progress bar writing to `stream`; `columns` limits its width. */
export function progressBar(stream: NodeJS.WritableStream): RenderProgress & { stop(): void } {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: 'rendering |{bar}| {value}/{total} variants  {status}',
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  )
  let started = false
  return {
    start(total) {
      started = true
      bar.start(total, 0, { status: '' })
    },
    advance(report) {
      bar.increment(1, { status: report.path ?? '' })
    },
    stop() {
      if (started) bar.stop()
    },
  }
}
