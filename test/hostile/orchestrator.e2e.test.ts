/**
 * The orchestrator under hostile names and packages: a PackageVariant whose
 * downstream repository or package, or upstream package, is `..`, absolute or holds a NUL byte
 * fails alone with a reason, and nothing is written outside `--out`; a
 * symbolic link in an upstream package is never followed or copied.
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { createRepo, writeTree } from '../support/git-repo.js'
import { fleetFiles, nginxV1, repository } from '../support/fleet.js'
import { source } from '../support/source.js'
import { runCli } from '../support/cli-run.js'

interface Report {
  variants: {
    subject: string
    path?: string
    status: string
    reasons: { code: string; message: string }[]
    warnings: string[]
  }[]
}

/** Every path below `dir`, symbolic links marked. */
function listTree(dir: string): string[] {
  const out: string[] = []
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = join(current, name)
      const rel = relative(dir, full).split(sep).join('/')
      const stat = lstatSync(full)
      if (stat.isSymbolicLink()) out.push(`${rel} -> link`)
      else if (stat.isDirectory()) {
        if (name !== '.git') walk(full)
      } else out.push(rel)
    }
  }
  walk(dir)
  return out
}

const variant = (name: string, repo: string, pkg: string, upstream = 'nginx') => source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: ${name}
    namespace: default
  spec:
    upstream: {repo: blueprints, package: ${JSON.stringify(upstream)}, revision: 1}
    downstream: {repo: ${JSON.stringify(repo)}, package: ${JSON.stringify(pkg)}}
`

describe('kpt-variants render with hostile names and packages', () => {
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-hostile-'))
    writeFileSync(
      join(dir, 'outside.yaml'),
      'apiVersion: v1\nkind: Secret\nmetadata: {name: outside}\ndata: {token: c2VjcmV0}\n',
    )
    // The blueprint's nginx package carries links out of itself: to a file, to a directory, absolute and relative.
    await createRepo(join(dir, 'repos', 'blueprints'), [
      [
        'nginx/v1',
        {
          ...nginxV1,
          'nginx/stolen.yaml': { link: '../../../outside.yaml' },
          'nginx/passwd.yaml': { link: '/etc/passwd' },
          'nginx/etc': { link: '/etc' },
        },
      ],
    ])
    mkdirSync(join(dir, 'fleet'))
    writeTree(join(dir, 'fleet'), {
      ...fleetFiles({ clusters: [] }),
      'repositories.yaml': [repository('blueprints', false), repository('edge', true)].join('---\n'),
      'variants.yaml': [
        variant('fine', 'edge', 'nginx'),
        variant('dot-dot-package', 'edge', '../../escaped'),
        variant('dot-dot-repo', '../..', 'nginx'),
        variant('absolute-package', 'edge', '/tmp/kpt-variants-escaped'),
        variant('nul-package', 'edge', 'a\0b'),
        variant('nested-dot-dot', 'edge', 'a/../../../escaped'),
        variant('upstream-dot-dot', 'edge', 'up1', '../..'),
        variant('upstream-absolute', 'edge', 'up2', '/etc'),
        variant('upstream-nul', 'edge', 'up3', 'ngi\0nx'),
      ].join('---\n'),
    })
  }, 60_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('each bad name fails alone with a reason; the good variant renders; nothing lands outside --out; links are not followed', async () => {
    const run = await runCli(dir, ['render', 'fleet', '--out', 'out', '--json'], { timeout: 60_000 })
    expect(run.exitCode).toBe(1)
    const report = JSON.parse(String(run.stdout)) as Report
    const byName = new Map(report.variants.map((v) => [v.subject.replace(/^.*\//, ''), v]))
    expect(byName.get('fine')?.status).toBe('created')
    for (const name of [
      'dot-dot-package',
      'dot-dot-repo',
      'absolute-package',
      'nul-package',
      'nested-dot-dot',
      'upstream-dot-dot',
      'upstream-absolute',
      'upstream-nul',
    ]) {
      const entry = byName.get(name)
      expect({ name, status: entry?.status }).toEqual({ name, status: 'failed' })
      expect(entry!.reasons.map((r) => r.message).join(' ')).not.toMatch(/\n\s+at /)
      expect(entry!.reasons.map((r) => r.code)).not.toContain('InternalError')
    }
    // Only the fleet, the repositories, the output and the file the links point at.
    expect(readdirSync(dir).sort()).toEqual(['fleet', 'out', 'outside.yaml', 'repos'])
    expect(() => lstatSync('/tmp/kpt-variants-escaped')).toThrow()
    const out = listTree(join(dir, 'out'))
    expect(out.filter((p) => p.includes('-> link') || /stolen|passwd|(^|\/)etc(\/|$)/.test(p))).toEqual([])
    expect(out.every((p) => p.startsWith('edge/nginx/'))).toBe(true)
    for (const file of out) expect(readFileSync(join(dir, 'out', file), 'utf8')).not.toContain('c2VjcmV0')
    expect(byName.get('fine')!.warnings.join('\n')).toMatch(/symlink/i)
    if (process.env['SHOW_REPORT'])
      console.log(
        JSON.stringify(
          report.variants.map((v) => [v.subject, v.status, v.reasons, v.warnings]),
          null,
          1,
        ),
      )
  }, 90_000)
})

describe('kpt-variants render with an exec: function in the upstream pipeline', () => {
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-hostile-exec-'))
    const script = join(dir, 'evil.sh')
    writeFileSync(script, `#!/bin/sh\ntouch ${join(dir, 'ran')}\ncat\n`, { mode: 0o755 })
    const kptfile = `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: nginx\n  annotations:\n    config.kubernetes.io/local-config: "true"\npipeline:\n  mutators:\n  - exec: ${script}\n`
    await createRepo(join(dir, 'repos', 'blueprints'), [['nginx/v1', { ...nginxV1, 'nginx/Kptfile': kptfile }]])
    mkdirSync(join(dir, 'fleet'))
    // No set: without clusters its target kind would be unknown (NoMatchingTargets), another failure than this test's.
    const { 'nginx-set.yaml': _set, ...fleet } = fleetFiles({ clusters: [] })
    writeTree(join(dir, 'fleet'), {
      ...fleet,
      'repositories.yaml': [repository('blueprints', false), repository('edge', true)].join('---\n'),
      'variants.yaml': variant('fine', 'edge', 'nginx'),
    })
  }, 60_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('is not run without --allow-exec: the variant fails saying so, nothing is written', async () => {
    const run = await runCli(dir, ['render', 'fleet', '--out', 'out', '--json'], { timeout: 60_000 })
    expect(run.exitCode).toBe(1)
    const report = JSON.parse(String(run.stdout)) as Report
    expect(report.variants.map((v) => v.status)).toEqual(['failed'])
    expect(report.variants[0]!.reasons.map((r) => r.code)).toEqual(['FunctionFailed'])
    expect(report.variants[0]!.reasons.map((r) => r.message).join(' ')).toMatch(/allow-exec/)
    expect(() => lstatSync(join(dir, 'ran'))).toThrow()
    const written = readdirSync(dir).includes('out') ? listTree(join(dir, 'out')).filter((p) => !p.startsWith('.')) : []
    expect(written).toEqual([])
  }, 90_000)
})
