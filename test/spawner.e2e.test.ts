/**
 * The helper process that starts a run's git processes (orchestrator/git/spawner.ts),
 * as the built code runs it: after the first few programs, the rest go
 * through it, with their input, output and exit codes intact; an idle helper
 * does not keep the run from ending.
 */
import { execa } from 'execa'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { repoRoot } from './e2e/runner.js'

const spawner = pathToFileURL(join(repoRoot, 'dist', 'orchestrator', 'git', 'spawner.js')).href

test('programs run through the helper after the first few, and the run ends when they are done', async () => {
  const script = `
    import { runProgram } from ${JSON.stringify(spawner)}
    import { readdirSync, readFileSync } from 'node:fs'
    const children = () => readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).flatMap((p) => {
      try {
        const stat = readFileSync('/proc/' + p + '/stat', 'utf8')
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === String(process.pid) ? [readFileSync('/proc/' + p + '/cmdline', 'utf8')] : []
      } catch { return [] }
    })
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => runProgram('sh', ['-c', 'read line; echo "$line" $0; echo err >&2; exit ' + (i % 3), String(i)], { cwd: '/', env: {}, input: 'in' + i + '\\n' })))
    const helper = children().filter((c) => c.includes('spawner-process'))
    console.log(JSON.stringify({ results: results.map((r) => [r.exitCode, r.stdout.toString(), r.stderr.toString()]), helper: helper.length }))
  `
  const run = await execa('node', ['--input-type=module', '-e', script], { timeout: 50_000 })
  const { results, helper } = JSON.parse(run.stdout) as { results: [number, string, string][]; helper: number }
  expect(results).toEqual(Array.from({ length: 40 }, (_, i) => [i % 3, `in${i} ${i}\n`, 'err\n']))
  expect(helper).toBe(1)
}, 60_000)
