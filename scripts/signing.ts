/**
 * Signing the images and attaching their SBOMs with cosign (built by scripts/build-cosign.sh), and
 * verifying both, as the release does and a user can (SECURITY.md).
 *
 * With a key, cosign signs with it; without one, keylessly (Sigstore's Fulcio certificate for the
 * OIDC identity of whoever runs it, e.g. a GitHub Actions workflow), and the verification then needs
 * the identity and its issuer. `offline` is for a registry on loopback: nothing goes to Sigstore's
 * transparency log, whose entry verification then does not ask for either; a registry there is
 * reached over plain HTTP.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'

/** tools/cosign/bin/cosign (scripts/build-cosign.sh), else cosign on PATH. */
export function findCosign(root?: string): string | undefined {
  const built = join(
    root ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..'),
    'tools',
    'cosign',
    'bin',
    'cosign',
  )
  if (existsSync(built)) return built
  return process.env['PATH']
    ?.split(':')
    .map((dir) => join(dir, 'cosign'))
    .find((file) => existsSync(file))
}

export interface Signer {
  cosign: string
  /** A cosign private key (with COSIGN_PASSWORD in `env`), else keyless. */
  key?: string
  /** The public key that verifies `key`'s signatures. */
  publicKey?: string
  /** Keyless: the certificate identity and OIDC issuer a signature must carry. */
  identity?: string
  issuer?: string
  /** A registry on loopback: no transparency log, plain HTTP. */
  offline?: boolean
  /** A scratch directory (offline signing keeps its signing config there). */
  work: string
  env?: Record<string, string>
}

/** Generates a key pair in `dir` (cosign.key, cosign.pub) protected by `password`. */
export async function generateKeyPair(
  cosign: string,
  dir: string,
  password: string,
): Promise<{ key: string; publicKey: string }> {
  mkdirSync(dir, { recursive: true })
  await execa(cosign, ['generate-key-pair'], { cwd: dir, env: { ...process.env, COSIGN_PASSWORD: password } })
  return { key: join(dir, 'cosign.key'), publicKey: join(dir, 'cosign.pub') }
}

function registryFlags(signer: Signer): string[] {
  return signer.offline ? ['--allow-http-registry', '--allow-insecure-registry'] : []
}

/** The flags that choose what signs: the key, and offline a signing config that names no service. */
async function signingFlags(signer: Signer): Promise<string[]> {
  const flags = signer.key ? ['--key', signer.key] : []
  if (signer.offline) {
    const config = join(signer.work, 'offline-signing-config.json')
    if (!existsSync(config)) {
      mkdirSync(signer.work, { recursive: true })
      await cosign(signer, ['signing-config', 'create', '--out', config])
    }
    flags.push('--signing-config', config)
  }
  return flags
}

function verifyFlags(signer: Signer): string[] {
  const flags = signer.publicKey
    ? ['--key', signer.publicKey]
    : [
        '--certificate-identity',
        required(signer.identity, 'identity'),
        '--certificate-oidc-issuer',
        required(signer.issuer, 'issuer'),
      ]
  if (signer.offline) flags.push('--insecure-ignore-tlog=true')
  return [...flags, ...registryFlags(signer)]
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new Error(`keyless verification needs the signer's ${what}`)
  return value
}

async function cosign(signer: Signer, args: string[]) {
  const run = await execa(signer.cosign, args, { env: { ...process.env, ...signer.env }, reject: false, all: true })
  if (run.exitCode !== 0) throw new CosignError(`cosign ${args[0]} ${args.at(-1)} failed:\n${run.all}`, String(run.all))
  return run
}

export class CosignError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message)
  }
}

/** Signs image `reference` (`name@sha256:...`: a digest, never a tag, which could move). */
export async function signImage(signer: Signer, reference: string): Promise<void> {
  await cosign(signer, ['sign', '--yes', ...(await signingFlags(signer)), ...registryFlags(signer), reference])
}

/** Attaches `sbomFile` (CycloneDX JSON) to image `reference` as a signed in-toto attestation. */
export async function attestSbom(signer: Signer, reference: string, sbomFile: string): Promise<void> {
  await cosign(signer, [
    'attest',
    '--yes',
    '--type',
    'cyclonedx',
    '--predicate',
    sbomFile,
    ...(await signingFlags(signer)),
    ...registryFlags(signer),
    reference,
  ])
}

/** Verifies the signature of image `reference` (a tag or a digest); throws CosignError when it does not hold. */
export async function verifyImage(signer: Signer, reference: string): Promise<void> {
  await cosign(signer, ['verify', ...verifyFlags(signer), reference])
}

/** Verifies the SBOM attestation of image `reference` and returns the SBOM it carries. */
export async function verifySbom(signer: Signer, reference: string): Promise<unknown> {
  const run = await cosign(signer, ['verify-attestation', '--type', 'cyclonedx', ...verifyFlags(signer), reference])
  const envelope = JSON.parse(String(run.stdout).trim().split('\n')[0]!) as { payload: string }
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as { predicate: unknown }
  return statement.predicate
}
