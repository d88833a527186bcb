/** Free loopback ports for the servers the tests start. */
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'

/** `count` distinct free loopback ports, held open together while chosen. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve) => {
          const server = createServer()
          server.listen(0, '127.0.0.1', () => resolve(server))
        }),
    ),
  )
  const ports = servers.map((s) => (s.address() as AddressInfo).port)
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
  return ports
}
