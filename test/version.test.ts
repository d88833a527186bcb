/**
 * One version: package.json's. Every other place that says a version of ours (deploy/'s image references,
 * the docs' commands, metadata.yaml's links, the lockfile, CHANGELOG.md's newest release) must say the
 * same, and `npm run release`'s setter must change every one of them.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { disagreements, setVersion, versionMentions } from '../scripts/version.js'
import { repositoryRoot } from './support/root.js'

const root = repositoryRoot()

test("every place that says a version of ours says package.json's", () => {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
  const mentions = versionMentions(root)
  // The places the issue named: the lockfile, deploy/'s three workloads, the README.
  for (const file of [
    'package-lock.json',
    'deploy/controller-deployment.yaml',
    'deploy/render-cronjob.yaml',
    'deploy/render-sharded-cronjob.yaml',
    'README.md',
  ])
    expect(mentions.map((m) => m.file)).toContain(file)
  expect(disagreements(root).map((m) => `${m.file}:${m.line} ${m.text}`)).toEqual([])
  expect(mentions.every((m) => m.version === version)).toBe(true)
})

describe('in a repository where two places disagree', () => {
  let dir: string
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-version-'))
    execFileSync('git', ['init', '-q'], { cwd: dir })
    write(
      'package.json',
      JSON.stringify({
        name: 'kpt-variants',
        version: '0.2.0',
        repository: { url: 'git+https://github.com/kpt-variants/kpt-variants.git' },
      }),
    )
    write('package-lock.json', JSON.stringify({ version: '0.2.0', packages: { '': { version: '0.2.0' } } }))
    write('deploy/job.yaml', 'image: ghcr.io/kpt-variants/kpt-variants:v0.1.0 # behind\n')
    write(
      'README.md',
      [
        'npm install -g ./kpt-variants-0.2.0.tgz',
        'kpt fn eval --image ghcr.io/kpt-variants/fan-out:v0.2.0',
        'podman tag kpt-variants/kpt-variants:0.2.0 registry.example.com/kpt-variants/kpt-variants:v0.2.0',
        'see https://github.com/kpt-variants/kpt-variants/tree/v0.1.9/functions/fan-out/',
        'the catalog: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0, and node:22-slim',
        'kpt pkg get https://github.com/kpt-variants/kpt-variants.git/deploy@v0.1.9 kpt-variants',
      ].join('\n'),
    )
    write('CHANGELOG.md', '## [Unreleased]\n\n## [0.2.0] - 2026-01-01\n\n## [0.1.0] - 2025-01-01\n')
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  test('the check names each place that disagrees, and an image tag without the catalog’s v', () => {
    expect(disagreements(dir).map((m) => `${m.file}:${m.line} ${m.text}`)).toEqual([
      'README.md:3 kpt-variants/kpt-variants:0.2.0',
      'README.md:4 https://github.com/kpt-variants/kpt-variants/tree/v0.1.9/',
      'README.md:6 https://github.com/kpt-variants/kpt-variants.git/deploy@v0.1.9',
      'deploy/job.yaml:1 ghcr.io/kpt-variants/kpt-variants:v0.1.0',
    ])
    // Others' images and versions are not ours.
    expect(versionMentions(dir).some((m) => m.text.includes('krm-functions-catalog'))).toBe(false)
  })

  test('a lockfile or a changelog behind package.json disagrees too', () => {
    write('package-lock.json', JSON.stringify({ version: '0.1.0', packages: { '': { version: '0.2.0' } } }))
    write('CHANGELOG.md', '## [Unreleased]\n\n## [0.1.0] - 2025-01-01\n')
    expect(disagreements(dir).map((m) => `${m.file}:${m.line} ${m.text}`)).toEqual(
      expect.arrayContaining(['package-lock.json:0 "version"', 'CHANGELOG.md:3 ## [0.1.0] - 2025-01-01']),
    )
  })

  test('setting a version changes package.json, the lockfile and every place, and the check then passes', () => {
    setVersion(dir, '1.0.0-rc.1')
    expect(readFileSync(join(dir, 'deploy/job.yaml'), 'utf8')).toBe(
      'image: ghcr.io/kpt-variants/kpt-variants:v1.0.0-rc.1 # behind\n',
    )
    expect(readFileSync(join(dir, 'README.md'), 'utf8').split('\n')[5]).toBe(
      'kpt pkg get https://github.com/kpt-variants/kpt-variants.git/deploy@v1.0.0-rc.1 kpt-variants',
    )
    expect(readFileSync(join(dir, 'README.md'), 'utf8').split('\n').slice(0, 4)).toEqual([
      'npm install -g ./kpt-variants-1.0.0-rc.1.tgz',
      'kpt fn eval --image ghcr.io/kpt-variants/fan-out:v1.0.0-rc.1',
      'podman tag kpt-variants/kpt-variants:v1.0.0-rc.1 registry.example.com/kpt-variants/kpt-variants:v1.0.0-rc.1',
      'see https://github.com/kpt-variants/kpt-variants/tree/v1.0.0-rc.1/functions/fan-out/',
    ])
    expect(JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'))).toEqual({
      version: '1.0.0-rc.1',
      packages: { '': { version: '1.0.0-rc.1' } },
    })
    // The changelog is the release's to move (scripts/changelog.ts): until then it names 0.2.0.
    write('CHANGELOG.md', '## [Unreleased]\n\n## [1.0.0-rc.1] - 2026-02-01\n')
    expect(disagreements(dir)).toEqual([])
  })

  test('a version that is not semantic is refused', () => {
    expect(() => setVersion(dir, '1.0')).toThrow('1.0 is not a semantic version X.Y.Z')
  })
})
