/**
 * `npm run release -- X.Y.Z [--dry-run]`: makes release X.Y.Z (docs/releasing.md).
 *
 *  1. sets the one version (package.json's, and every place scripts/version.ts finds) and moves
 *     CHANGELOG.md's Unreleased section under it, in a commit "Release vX.Y.Z";
 *  2. builds, and packs the npm package (kpt-variants-X.Y.Z.tgz) with its CycloneDX SBOM;
 *  3. builds every image, labelled, pushes it as vX.Y.Z, vX.Y and vX, writes its SBOM, signs its
 *     digest with cosign and attaches the SBOM as a signed attestation, then verifies both;
 *  4. tags the commit vX.Y.Z, and functions/ts/<function>/vX.Y.Z for each function, as the kpt
 *     function catalog tags a function's release;
 *  5. writes release.json (what was made, with digests) beside the artifacts and prints what to push
 *     and publish: nothing leaves the machine but the images.
 *
 * --dry-run does all of it in a clone of HEAD in a temporary directory: the images go to a registry it
 * starts on loopback, signed with a key pair it generates there; the repository, its branches and tags
 * are left as they were (test/release.e2e.test.ts proves it).
 */
import { createHash } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Command } from 'commander'
import { execa } from 'execa'
import semver from 'semver'
import { releaseChangelog } from './changelog.js'
import { baseBuildArgs, buildImage, imageSbom, pushImage } from './image-build.js'
import type { PushedImage } from './image-build.js'
import {
  defaultRegistry,
  functionTargets,
  imageTargets,
  installedEngine,
  packageInfo,
  sourceUrl,
} from './image-names.js'
import { startLocalRegistry } from './registry.js'
import type { LocalRegistry } from './registry.js'
import { attestSbom, findCosign, generateKeyPair, signImage, verifyImage, verifySbom } from './signing.js'
import type { Signer } from './signing.js'
import { disagreements, semverPattern, setVersion } from './version.js'

const repository = resolve(new URL('../..', import.meta.url).pathname)

const command = new Command('release')
  .description('make release X.Y.Z: version, changelog, package, signed images with SBOMs, tags (docs/releasing.md)')
  .argument('<version>', "the version to release, X.Y.Z (not below package.json's, not released before)")
  .option('--dry-run', 'do all of it in a clone of HEAD in a temporary directory, against a registry on loopback')
  .option('--registry <host/prefix>', 'where the images go', defaultRegistry)
  .option('--key <file>', 'sign with this cosign private key (its password in $COSIGN_PASSWORD); default: keyless')
  .option('--public-key <file>', 'with --key, the public key to verify the signatures with')
  .option(
    '--identity <identity>',
    "keyless: the signer's certificate identity, to verify with (e.g. the workflow's URL)",
  )
  .option('--issuer <url>', 'keyless: the OIDC issuer of that identity', 'https://token.actions.githubusercontent.com')
  .option(
    '--out <dir>',
    'where the artifacts go (default: dist/release/X.Y.Z, or a temporary directory with --dry-run)',
  )
  .option('--engine <name>', 'podman or docker (default: $KPT_FN_RUNTIME, else whichever is installed)')
  .option('--base <image>', "the images' base (default: node:22-slim, else one made from this machine's Node)")
  .parse()
const [version] = command.args as [string]
const options = command.opts<{
  dryRun?: boolean
  registry: string
  key?: string
  publicKey?: string
  identity?: string
  issuer: string
  out?: string
  engine?: string
  base?: string
}>()

const log = (line: string) => console.log(line)

try {
  await release()
} catch (err) {
  console.error(`release: ${err instanceof Error ? err.message : String(err)}`)
  process.exitCode = 1
}

async function release(): Promise<void> {
  if (!new RegExp(`^${semverPattern}$`).test(version)) throw new Error(`${version} is not a semantic version X.Y.Z`)
  const current = packageInfo(repository).version
  if (semver.lt(version, current)) throw new Error(`${version} is below package.json's version ${current}`)
  if ((await git(repository, 'tag', '--list', `v${version}`)).trim()) throw new Error(`v${version} is tagged already`)
  const engine = options.engine ?? installedEngine() ?? fail('no container engine: install podman (or docker)')
  const cosign = findCosign(repository) ?? fail('cosign is not built: bash scripts/build-cosign.sh')
  if (!options.dryRun) {
    if ((await git(repository, 'status', '--porcelain')).trim())
      throw new Error('the work tree has changes: commit or stash them (a release is made from a clean tree)')
    if (!options.key && !options.identity)
      throw new Error('keyless signing needs --identity (and --issuer) to verify the signatures with')
  } else if ((await git(repository, 'status', '--porcelain', '--untracked-files=no')).trim()) {
    log('The work tree has uncommitted changes: the dry run releases HEAD, without them.')
  }

  const out = resolve(
    options.out ??
      (options.dryRun
        ? mkdtempSync(join(tmpdir(), `kpt-variants-release-${version}-`))
        : join(repository, 'dist', 'release', version)),
  )
  mkdirSync(out, { recursive: true })
  // The dry run's repository is a clone of HEAD, with the repository's node_modules; the release's, the repository.
  const root = options.dryRun ? await cloneForDryRun(out) : repository
  let registry: LocalRegistry | undefined
  try {
    // 1. The version and the changelog, in a commit (the changelog checked first: nothing to release changes nothing).
    const changelog = join(root, 'CHANGELOG.md')
    const date = new Date().toISOString().slice(0, 10)
    const released = releaseChangelog(readFileSync(changelog, 'utf8'), version, date, sourceUrl(root))
    setVersion(root, version)
    writeFileSync(changelog, released)
    const disagreeing = disagreements(root)
    if (disagreeing.length > 0)
      throw new Error(
        `places still disagree with ${version}: ${disagreeing.map((m) => `${m.file}:${m.line}`).join(', ')}`,
      )
    await git(root, 'commit', '-q', '-a', '-m', `Release v${version}`)
    const commit = (await git(root, 'rev-parse', 'HEAD')).trim()
    log(`1. ${version} set in package.json and every place that says it, CHANGELOG.md released: ${commit.slice(0, 12)}`)

    // 2. The build, the npm package and its SBOM.
    await run(root, 'npm', ['run', 'build'])
    const pack = JSON.parse(
      (await run(root, 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out])).stdout,
    ) as { filename: string; size: number; unpackedSize: number; entryCount: number; integrity: string }[]
    const tarball = join(out, pack[0]!.filename)
    const tarballSbom = join(out, `kpt-variants-${version}.cdx.json`)
    writeFileSync(
      tarballSbom,
      packageSbom(
        (await run(root, 'npm', ['sbom', '--sbom-format', 'cyclonedx', '--omit', 'dev', '--package-lock-only'])).stdout,
      ),
    )
    log(
      `2. ${tarball} (${(pack[0]!.size / 2 ** 20).toFixed(2)} MiB, ${pack[0]!.entryCount} files) and its SBOM ${tarballSbom}`,
    )

    // 3. The images: built, pushed, described, signed and attested, verified.
    let registryName = options.registry
    const env: Record<string, string> = {}
    let signer: Signer
    if (options.dryRun) {
      registry = await startLocalRegistry()
      registryName = `${registry.host}/kpt-variants`
      Object.assign(env, registry.env)
      const keys = await generateKeyPair(cosign, join(out, 'keys'), '')
      signer = { cosign, ...keys, offline: true, work: out, env: { COSIGN_PASSWORD: '' } }
    } else {
      signer = {
        cosign,
        work: out,
        ...(options.key
          ? { key: options.key, publicKey: options.publicKey ?? fail('--key needs --public-key to verify with') }
          : {}),
        ...(options.identity ? { identity: options.identity, issuer: options.issuer } : {}),
      }
    }
    const buildArgs = await baseBuildArgs(engine, { ...(options.base ? { base: options.base } : {}), log })
    const images: (PushedImage & { sbom: string; size: number })[] = []
    for (const target of imageTargets) {
      const built = await buildImage(engine, root, target, {
        version,
        registry: registryName,
        revision: commit,
        buildArgs,
      })
      const pushed = await pushImage(engine, target, { version, registry: registryName, env })
      const sbom = join(out, 'images', `${target}.cdx.json`)
      mkdirSync(join(out, 'images'), { recursive: true })
      writeFileSync(sbom, await imageSbom(engine, built.tag, env))
      for (const digest of new Set(Object.values(pushed.digests))) {
        const reference = `${built.tag.slice(0, built.tag.lastIndexOf(':'))}@${digest}`
        await signImage(signer, reference)
        await attestSbom(signer, reference, sbom)
      }
      for (const tag of pushed.tags) await verifyImage(signer, tag)
      await verifySbom(signer, built.tag)
      if (options.dryRun) await execa(engine, ['rmi', built.tag], { reject: false })
      images.push({ ...pushed, sbom, size: built.size })
      log(
        `3. ${built.tag}@${pushed.digests[built.tag]} (${(built.size / 2 ** 20).toFixed(0)} MiB): pushed, signed, SBOM attested, verified`,
      )
    }

    // 4. The tags: the release's, and each function's as the catalog tags them.
    const tags = [`v${version}`, ...functionTargets.map((fn) => `functions/ts/${fn}/v${version}`)]
    for (const tag of tags) await git(root, 'tag', '-a', '-m', `kpt-variants ${version}`, tag, commit)
    log(`4. tagged ${commit.slice(0, 12)}: ${tags.join(', ')}`)

    // 5. What was made.
    const manifest = {
      version,
      commit,
      dryRun: Boolean(options.dryRun),
      package: {
        file: tarball,
        sha256: createHash('sha256').update(readFileSync(tarball)).digest('hex'),
        integrity: pack[0]!.integrity,
        size: pack[0]!.size,
        unpackedSize: pack[0]!.unpackedSize,
        files: pack[0]!.entryCount,
        sbom: tarballSbom,
      },
      images: images.map(({ target, tags: imageTags, digests, sbom, size }) => ({
        target,
        tags: imageTags,
        digest: digests[imageTags[0]!],
        size,
        sbom,
      })),
      tags,
      ...(signer.publicKey ? { publicKey: signer.publicKey } : { identity: signer.identity, issuer: signer.issuer }),
    }
    writeFileSync(join(out, 'release.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    log(`5. ${join(out, 'release.json')}`)
    if (options.dryRun) log(`\nDry run: nothing changed in ${repository}; the release it would make is in ${out}.`)
    else
      log(
        [
          '',
          'Now push and publish (docs/releasing.md):',
          `  git push origin HEAD ${tags.join(' ')}`,
          `  npm publish ${tarball}`,
          `  attach ${tarball} and ${tarballSbom} to the GitHub release of v${version}`,
        ].join('\n'),
      )
  } finally {
    await registry?.stop()
    if (options.dryRun) rmSync(join(out, 'repo'), { recursive: true, force: true })
  }
}

/** A clone of HEAD in `out`/repo, using the repository's node_modules, with a committer of its own. */
async function cloneForDryRun(out: string): Promise<string> {
  const clone = join(out, 'repo')
  await execa('git', ['clone', '--quiet', '--no-hardlinks', repository, clone])
  const modules = join(repository, 'node_modules')
  if (existsSync(modules)) symlinkSync(realpathSync(modules), join(clone, 'node_modules'))
  await git(clone, 'config', 'user.name', 'kpt-variants release dry run')
  await git(clone, 'config', 'user.email', 'release-dry-run@localhost')
  return clone
}

/** npm's SBOM of the package, its subject named as the package (npm names it after the directory it ran in). */
function packageSbom(text: string): string {
  const sbom = JSON.parse(text) as { metadata?: { component?: Record<string, unknown> } }
  if (sbom.metadata?.component) sbom.metadata.component['name'] = 'kpt-variants'
  return `${JSON.stringify(sbom, null, 2)}\n`
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return String((await execa('git', args, { cwd })).stdout)
}

async function run(cwd: string, program: string, args: string[]): Promise<{ stdout: string }> {
  const child = await execa(program, args, { cwd, reject: false, all: true })
  if (child.exitCode !== 0) throw new Error(`${program} ${args.join(' ')} failed:\n${child.all}`)
  return { stdout: String(child.stdout) }
}

function fail(message: string): never {
  throw new Error(message)
}
