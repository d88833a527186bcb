/**
 * A real OCI registry on loopback, for the image tests and the release's dry run: the Distribution
 * registry (Debian's `docker-registry`, or the upstream binary `registry`) serving plain HTTP on a free
 * port of 127.0.0.1, its storage in a temporary directory. Podman reaches it through a registries.conf
 * that marks it insecure (plain HTTP), given in `env` as CONTAINERS_REGISTRIES_CONF; with `storage`, the
 * engine also gets a container storage of its own (CONTAINERS_STORAGE_CONF), empty, so that every image
 * it runs is really pulled from the registry.
 */
import { spawn, spawnSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface LocalRegistry {
  /** `127.0.0.1:PORT`, the registry part of an image name. */
  host: string
  /** What podman needs to push to and pull from it (and, with `storage`, to use a storage of its own). */
  env: Record<string, string>
  /** Stops the registry, empties the engine's own storage and removes every file. */
  stop(): Promise<void>
}

/** The registry's program: Debian's name for it, else the upstream one. */
export function registryBinary(): string | undefined {
  return ['docker-registry', 'registry'].find((name) => spawnSync(name, ['--version']).status === 0)
}

/** Starts a registry on a free loopback port; resolves once it listens. */
export async function startLocalRegistry(options: { storage?: boolean; engine?: string } = {}): Promise<LocalRegistry> {
  const binary = registryBinary()
  if (!binary)
    throw new Error(
      'no registry program (docker-registry or registry) is installed: apt-get install docker-registry gives one',
    )
  const dir = mkdtempSync(join(tmpdir(), 'kpt-variants-registry-'))
  const port = await freePort()
  const host = `127.0.0.1:${port}`
  writeFileSync(
    join(dir, 'config.yml'),
    [
      'version: 0.1',
      'log:',
      '  level: info',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${host}`,
      '',
    ].join('\n'),
  )
  writeFileSync(join(dir, 'registries.conf'), `[[registry]]\nlocation = "${host}"\ninsecure = true\n`)
  const env: Record<string, string> = { CONTAINERS_REGISTRIES_CONF: join(dir, 'registries.conf') }
  if (options.storage) {
    mkdirSync(join(dir, 'storage'))
    writeFileSync(
      join(dir, 'storage.conf'),
      `[storage]\ndriver = "overlay"\ngraphroot = "${join(dir, 'storage', 'root')}"\nrunroot = "${join(dir, 'storage', 'run')}"\n`,
    )
    env['CONTAINERS_STORAGE_CONF'] = join(dir, 'storage.conf')
  }

  const child = spawn(binary, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] })
  try {
    await listening(child, host)
  } catch (err) {
    child.kill()
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return {
    host,
    env,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      if (child.exitCode === null) child.kill()
      await exited
      // The engine's own storage: its layers are emptied by the engine itself (overlay mounts, files it owns).
      if (options.storage)
        spawnSync(options.engine ?? 'podman', ['system', 'reset', '--force'], { env: { ...process.env, ...env } })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Resolves when the registry says it listens on `host`; rejects if it exits first. */
function listening(child: ChildProcess, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = ''
    child.stderr!.setEncoding('utf8')
    const onData = (chunk: string) => {
      log += chunk
      if (log.includes(`listening on ${host}`)) {
        child.stderr!.off('data', onData)
        child.stderr!.resume() // keep draining, unread
        resolve()
      }
    }
    child.stderr!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`the registry exited (${code}) before it listened:\n${log}`)))
    child.once('error', reject)
  })
}

/** A free loopback port (the registry binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}
