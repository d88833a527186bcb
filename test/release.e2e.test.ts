/**
 * `npm run release -- X.Y.Z --dry-run` makes the whole release (version, changelog, package and its
 * SBOM, images pushed to a registry on loopback, signed, SBOMs attested and verified, tags) in a clone in
 * a temporary directory, and leaves the repository exactly as it was: its files, its index, its
 * branches and tags. The version released is package.json's while it is not tagged yet, else the next
 * patch (a version the images' build cache mostly has either way).
 *
 * Needs a container engine, a registry program and cosign, as the image tests do: skipped without them,
 * saying so, and failing in CI (test/support/requires.ts).
 */
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import semver from 'semver'
import { repoRoot } from './e2e/runner.js'
import { functionTargets, imageTargets, installedEngine, packageVersion } from '../scripts/image-names.js'
import { registryBinary } from '../scripts/registry.js'
import { findCosign } from '../scripts/signing.js'
import { testIfAvailable } from './support/requires.js'

const missing = [
  installedEngine() ? undefined : 'a container engine (podman)',
  registryBinary() ? undefined : 'a registry program (apt-get install docker-registry)',
  findCosign(repoRoot) ? undefined : 'cosign (bash scripts/build-cosign.sh)',
].filter((what) => what !== undefined)

const git = async (...args: string[]) => String((await execa('git', args, { cwd: repoRoot })).stdout)

/** Everything a release could change in the repository: HEAD, its branch and the tags, the index, the work tree's changes and untracked files. */
async function repositoryState(): Promise<Record<string, string>> {
  const digest = (text: string) => createHash('sha256').update(text).digest('hex')
  const untracked = (await git('ls-files', '--others', '--exclude-standard', '-z')).split('\0').filter(Boolean)
  return {
    head: await git('rev-parse', 'HEAD'),
    // The tags, and the branch checked out (other worktrees of a shared repository move their own branches meanwhile).
    refs: await git(
      'for-each-ref',
      '--format=%(refname) %(objectname)',
      'refs/tags',
      'refs/stash',
      await git('symbolic-ref', 'HEAD'),
    ),
    index: digest(await git('ls-files', '--stage')),
    status: await git('status', '--porcelain=v1', '--untracked-files=all'),
    changes: digest(await git('diff', 'HEAD', '--binary')),
    untracked: digest(untracked.map((file) => `${file}\0${contents(join(repoRoot, file))}`).join('\0')),
    releaseDir: String(existsSync(join(repoRoot, 'dist', 'release'))),
  }
}

/** A file's bytes, or where a symbolic link points (node_modules is one, in a worktree). */
function contents(path: string): string {
  if (!existsSync(path)) return ''
  return lstatSync(path).isSymbolicLink() ? `-> ${readlinkSync(path)}` : readFileSync(path).toString('base64')
}

const dryRun = testIfAvailable(missing.length === 0, `the release dry run needs ${missing.join(', ')}`)

dryRun(
  `the release dry run makes every artifact and leaves the repository unchanged${missing.length ? ` (needs ${missing.join(', ')})` : ''}`,
  async () => {
    const current = packageVersion(repoRoot)
    const version = (await git('tag', '--list', `v${current}`)).trim() ? semver.inc(current, 'patch')! : current
    const out = mkdtempSync(join(tmpdir(), 'kpt-variants-release-test-'))
    try {
      const before = await repositoryState()
      const run = await execa(
        'node',
        [join(repoRoot, 'dist', 'scripts', 'release.js'), version, '--dry-run', '--out', out],
        {
          cwd: repoRoot,
          reject: false,
          all: true,
        },
      )
      expect({ exitCode: run.exitCode, output: run.exitCode === 0 ? '' : run.all }).toEqual({ exitCode: 0, output: '' })
      expect(await repositoryState()).toEqual(before)

      const release = JSON.parse(readFileSync(join(out, 'release.json'), 'utf8')) as {
        version: string
        commit: string
        dryRun: boolean
        package: { file: string; sha256: string; sbom: string; files: number }
        images: { target: string; tags: string[]; digest: string; sbom: string }[]
        tags: string[]
        publicKey: string
      }
      expect(release).toMatchObject({ version, dryRun: true })
      expect(release.tags).toEqual([`v${version}`, ...functionTargets.map((fn) => `functions/ts/${fn}/v${version}`)])
      expect(createHash('sha256').update(readFileSync(release.package.file)).digest('hex')).toBe(release.package.sha256)
      expect(release.package.file).toBe(join(out, `kpt-variants-${version}.tgz`))
      const sbom = JSON.parse(readFileSync(release.package.sbom, 'utf8')) as {
        bomFormat: string
        metadata: { component: { name: string; version: string } }
        components: { name: string }[]
      }
      expect(sbom).toMatchObject({ bomFormat: 'CycloneDX', metadata: { component: { name: 'kpt-variants', version } } })
      expect(sbom.components.map((c) => c.name)).toEqual(
        expect.arrayContaining(['yaml', 'commander', '@kubernetes/client-node']),
      )
      expect(release.images.map((i) => i.target)).toEqual(imageTargets)
      for (const image of release.images) {
        expect(image.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
        expect(image.tags.map((t) => t.slice(t.lastIndexOf(':') + 1))).toEqual([
          `v${version}`,
          `v${semver.major(version)}.${semver.minor(version)}`,
          `v${semver.major(version)}`,
        ])
        expect((JSON.parse(readFileSync(image.sbom, 'utf8')) as { bomFormat: string }).bomFormat).toBe('CycloneDX')
      }
      expect(existsSync(release.publicKey)).toBe(true)
      // The clone it released from is gone with its tags; only the artifacts stay.
      expect(existsSync(join(out, 'repo'))).toBe(false)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  },
  1_200_000,
)

test('a release below package.json’s version is refused before anything is made', async () => {
  const run = await execa('node', [join(repoRoot, 'dist', 'scripts', 'release.js'), '0.0.1', '--dry-run'], {
    cwd: repoRoot,
    reject: false,
  })
  expect(run.exitCode).toBe(1)
  expect(run.stderr).toBe(`release: 0.0.1 is below package.json's version ${packageVersion(repoRoot)}`)
})
