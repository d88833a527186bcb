/** `render --report FILE` and `status --html FILE`: the fleet page of a run's report or of a fleet's status. */
import { existsSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'
import type { RunReport } from '../report/report.js'
import { writeFleetPage } from '../page/html.js'
import { modelFromReport, modelFromStatus } from '../page/model.js'
import type { StatusInput } from '../page/model.js'

/** A usage error unless `file` can be written: its directory exists, and it is not a directory. */
export function checkReportFile(file: string, flag: string): void {
  if (!existsSync(dirname(file)) || !statSync(dirname(file)).isDirectory())
    throw new UsageError(`${flag} ${file}: directory ${dirname(file)} does not exist`)
  if (existsSync(file) && statSync(file).isDirectory()) throw new UsageError(`${flag} ${file} is a directory`)
}

/** Writes the page of a render's report (the same object `--json` prints). */
export function writeReportPage(file: string, report: RunReport, title: string, io: CliIO): void {
  writeFleetPage(file, modelFromReport(report, title))
  io.stderr(`fleet page: ${file}\n`)
}

/** Writes the page of a fleet's status (the rows `status --json` prints). */
export function writeStatusPage(file: string, status: StatusInput, title: string, io: CliIO): void {
  writeFleetPage(file, modelFromStatus(status, title))
  io.stderr(`fleet page: ${file}\n`)
}
