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

/** The npm package made in step 2: the tarball, its SBOM and what `npm pack` said of it. */
interface PackedPackage {
  tarball: string
  sbom: string
  pack: { filename: string; size: number; unpackedSize: number; entryCount: number; integrity: string }
}

/** Where step 3's images go: the registry's name and what the engine needs to reach it, and who signs them. */
interface ImageDestination {
  registryName: string
  env: Record<string, string>
  signer: Signer
}

type ReleasedImage = PushedImage & { sbom: string; size: number }

/** What every image of step 3 is made from and where it goes. */
interface ImageRelease {
  engine: string
  root: string
  commit: string
  out: string
  destination: ImageDestination
}

async function release(): Promise<void> {
  const { engine, cosign } = await checkReleasable()
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
    const commit = await commitVersion(root)
    const packed = await packPackage(root, out)
    // 3. The images: built, pushed, described, signed and attested, verified.
    // Assigned before the signer's keys are made, so that the finally below stops it if that fails.
    if (options.dryRun) registry = await startLocalRegistry()
    const destination: ImageDestination = {
      registryName: registry ? `${registry.host}/kpt-variants` : options.registry,
      env: { ...registry?.env },
      signer: await releaseSigner(cosign, out),
    }
    const images = await publishImages({ engine, root, commit, out, destination })
    const tags = await tagRelease(root, commit)
    writeManifest(out, { commit, packed, images, tags, signer: destination.signer })
    printNextSteps(out, packed, tags)
  } finally {
    await registry?.stop()
    if (options.dryRun) rmSync(join(out, 'repo'), { recursive: true, force: true })
  }
}

/** Refuses a version or a repository that cannot be released, before anything changes; finds the tools it needs. */
async function checkReleasable(): Promise<{ engine: string; cosign: string }> {
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
  return { engine, cosign }
}

/** 1. The version and the changelog, in a commit; returns the commit. */
async function commitVersion(root: string): Promise<string> {
  // The changelog is checked first: nothing to release changes nothing.
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
  return commit
}

/** 2. The build, the npm package and its SBOM. */
async function packPackage(root: string, out: string): Promise<PackedPackage> {
  await run(root, 'npm', ['run', 'build'])
  const [pack] = JSON.parse(
    (await run(root, 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out])).stdout,
  ) as PackedPackage['pack'][]
  const tarball = join(out, pack!.filename)
  const sbom = join(out, `kpt-variants-${version}.cdx.json`)
  writeFileSync(
    sbom,
    packageSbom(
      (await run(root, 'npm', ['sbom', '--sbom-format', 'cyclonedx', '--omit', 'dev', '--package-lock-only'])).stdout,
    ),
  )
  log(`2. ${tarball} (${(pack!.size / 2 ** 20).toFixed(2)} MiB, ${pack!.entryCount} files) and its SBOM ${sbom}`)
  return { tarball, sbom, pack: pack! }
}

/** Who signs the images: a key pair made for the dry run, else the --key or the keyless identity given. */
async function releaseSigner(cosign: string, out: string): Promise<Signer> {
  if (options.dryRun) {
    const keys = await generateKeyPair(cosign, join(out, 'keys'), '')
    return { cosign, ...keys, offline: true, work: out, env: { COSIGN_PASSWORD: '' } }
  }
  return {
    cosign,
    work: out,
    ...(options.key
      ? { key: options.key, publicKey: options.publicKey ?? fail('--key needs --public-key to verify with') }
      : {}),
    ...(options.identity ? { identity: options.identity, issuer: options.issuer } : {}),
  }
}

/** 3. Every image, one after the other, built on the same base. */
async function publishImages(plan: ImageRelease): Promise<ReleasedImage[]> {
  const { engine } = plan
  const buildArgs = await baseBuildArgs(engine, { ...(options.base ? { base: options.base } : {}), log })
  const images: ReleasedImage[] = []
  for (const target of imageTargets) {
    images.push(await publishImage({ ...plan, target, buildArgs }))
  }
  return images
}

/** One image: built, pushed, described, signed and attested, verified. */
async function publishImage(image: ImageRelease & { target: string; buildArgs: string[] }): Promise<ReleasedImage> {
  const { engine, target, out, destination } = image
  const { registryName: registry, env, signer } = destination
  const built = await buildImage(engine, image.root, target, {
    version,
    registry,
    revision: image.commit,
    buildArgs: image.buildArgs,
  })
  const pushed = await pushImage(engine, target, { version, registry, env })
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
  log(
    `3. ${built.tag}@${pushed.digests[built.tag]} (${(built.size / 2 ** 20).toFixed(0)} MiB): pushed, signed, SBOM attested, verified`,
  )
  return { ...pushed, sbom, size: built.size }
}

/** 4. The tags: the release's, and each function's as the catalog tags them. */
async function tagRelease(root: string, commit: string): Promise<string[]> {
  const tags = [`v${version}`, ...functionTargets.map((fn) => `functions/ts/${fn}/v${version}`)]
  for (const tag of tags) await git(root, 'tag', '-a', '-m', `kpt-variants ${version}`, tag, commit)
  log(`4. tagged ${commit.slice(0, 12)}: ${tags.join(', ')}`)
  return tags
}

/** 5. What was made: release.json beside the artifacts. */
function writeManifest(
  out: string,
  made: { commit: string; packed: PackedPackage; images: ReleasedImage[]; tags: string[]; signer: Signer },
): void {
  const { commit, packed, images, tags, signer } = made
  const { tarball, pack } = packed
  const manifest = {
    version,
    commit,
    dryRun: Boolean(options.dryRun),
    package: {
      file: tarball,
      sha256: createHash('sha256').update(readFileSync(tarball)).digest('hex'),
      integrity: pack.integrity,
      size: pack.size,
      unpackedSize: pack.unpackedSize,
      files: pack.entryCount,
      sbom: packed.sbom,
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
}

/** The dry run's last word, or what a real release leaves to do by hand: nothing leaves the machine but the images. */
function printNextSteps(out: string, packed: PackedPackage, tags: string[]): void {
  if (options.dryRun) log(`\nDry run: nothing changed in ${repository}; the release it would make is in ${out}.`)
  else
    log(
      [
        '',
        'Now push and publish (docs/releasing.md):',
        `  git push origin HEAD ${tags.join(' ')}`,
        `  npm publish ${packed.tarball}`,
        `  attach ${packed.tarball} and ${packed.sbom} to the GitHub release of v${version}`,
      ].join('\n'),
    )
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
