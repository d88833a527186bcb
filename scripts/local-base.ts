/**
 * Base images made from this machine, for building the images where no
 * registry is reachable: the running Node binary and the shared libraries it
 * links, npm, the machine's CA bundle (so npm inside the build trusts what this
 * machine trusts), and an /etc/passwd with `nobody` (kpt runs function
 * containers as `--user nobody`). The orchestrator's base adds git and
 * /bin/sh (git's local transport starts its helpers through a shell).
 * Each is a tarball of host files imported with `<engine> import`.
 */
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, relative } from 'node:path'
import { execa } from 'execa'
import { hasImage } from './image-names.js'

/** The two bases, as image names the Dockerfile's BASE and GIT_BASE take. */
export interface LocalBases {
  node: string
  git: string
}

const caBundle = '/etc/ssl/certs/ca-certificates.crt'

/** The bases for the running Node, made unless the engine has them already (their tag is the Node version). */
export async function makeLocalBases(engine: string): Promise<LocalBases> {
  const tag = process.version
  const bases = { node: `localhost/kpt-variants/node-base:${tag}`, git: `localhost/kpt-variants/node-git-base:${tag}` }
  if (hasImage(engine, bases.node) && hasImage(engine, bases.git)) return bases

  const node = realpathSync(process.execPath)
  const npm = await findNpm()
  const nodeFiles = [node, npm, ...(await sharedLibraries(node))]
  if (existsSync(caBundle)) nodeFiles.push(caBundle)
  const links = { '/usr/local/bin/node': node, '/usr/local/lib/node_modules/npm': npm }

  const gitTools = ['/usr/bin/git', '/usr/lib/git-core/git-remote-https', '/bin/sh']
  for (const tool of gitTools)
    if (!existsSync(tool)) throw new Error(`${tool} not found: the orchestrator's base needs git and /bin/sh`)
  const gitFiles = [...nodeFiles, ...gitTools, '/usr/lib/git-core', '/usr/share/git-core']
  for (const tool of gitTools) gitFiles.push(...(await sharedLibraries(tool)))

  await importRootfs(engine, bases.node, nodeFiles, links)
  await importRootfs(engine, bases.git, gitFiles, links)
  return bases
}

/**
 * The npm package to put in the base: the one installed beside Node, else the
 * one on PATH (a Node from the npm registry's `node` package, as CI runs Node
 * 22 with, has none beside it; npm is JavaScript, and runs on that Node).
 */
async function findNpm(): Promise<string> {
  const beside = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm')
  if (existsSync(join(beside, 'bin', 'npm-cli.js'))) return realpathSync(beside)
  const onPath = await execa('sh', ['-c', 'command -v npm'], { reject: false })
  const cli = String(onPath.stdout).trim()
  const npm = cli ? join(dirname(realpathSync(cli)), '..') : ''
  if (npm && existsSync(join(npm, 'bin', 'npm-cli.js'))) return realpathSync(npm)
  throw new Error(`npm not found beside ${process.execPath} nor on PATH`)
}

/** The absolute paths of the shared libraries `binary` loads, from `ldd`. */
async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await execa('ldd', [binary])
  return [...stdout.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!)
}

/**
 * Tars `files` (directories whole, symlinks kept, each symlink's target
 * added) plus the generated /etc files and `links`, and imports the tarball.
 */
async function importRootfs(
  engine: string,
  image: string,
  files: readonly string[],
  links: Record<string, string>,
): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'kpt-variants-base-'))
  try {
    const staging = join(work, 'rootfs')
    mkdirSync(staging)
    const entries = new Set<string>()
    for (const file of files) {
      // Stored under its directory's real path (so /lib/x.so lands in /usr/lib), and its target when it is a symlink.
      entries.add(join(realpathSync(dirname(file)), basename(file)).slice(1))
      entries.add(realpathSync(file).slice(1))
    }
    for (const entry of [...entries].sort()) {
      // Each parent directory is made, which a layer needs before the files in it; symlinks stay symlinks.
      mkdirSync(join(staging, dirname(entry)), { recursive: true })
      cpSync(`/${entry}`, join(staging, entry), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true })
    }
    mkdirSync(join(staging, 'etc'), { recursive: true })
    writeFileSync(
      join(staging, 'etc', 'passwd'),
      'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n',
    )
    writeFileSync(join(staging, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n')
    mkdirSync(join(staging, 'tmp'), { recursive: true })
    chmodSync(join(staging, 'tmp'), 0o1777)
    // A merged-/usr host has /bin, /lib and /lib64 as symlinks into /usr: the image gets the same.
    for (const top of ['/bin', '/lib', '/lib64', '/sbin']) {
      if (existsSync(top) && lstatSync(top).isSymbolicLink())
        symlinkSync(relative('/', realpathSync(top)), join(staging, top))
    }
    for (const [link, target] of Object.entries(links)) {
      if (target === link) continue // already where the Dockerfile looks
      mkdirSync(join(staging, dirname(link)), { recursive: true })
      symlinkSync(target, join(staging, link))
    }
    const tarball = join(work, 'rootfs.tar')
    await execa('tar', ['-c', '-f', tarball, '-C', staging, '.'])
    const env = [
      'PATH=/usr/local/bin:/usr/bin:/bin',
      ...(files.includes(caBundle) ? [`NODE_EXTRA_CA_CERTS=${caBundle}`] : []),
    ]
    await execa(engine, ['import', ...env.flatMap((e) => ['--change', `ENV ${e}`]), tarball, image])
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
