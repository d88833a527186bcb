/**
 * The controller's HTTP listener (`--listen`): a git host's push webhook,
 * which makes the leader list the upstream repositories now instead of at
 * its next poll, and the probes of its Deployment.
 *
 *   POST /webhook   202 when this replica leads (the listing is queued), 503 when it stands by
 *   GET  /healthz   200 while the process runs (liveness)
 *   GET  /readyz    200 once listening, leading or standing by (the webhook Service selects the leader
 *                   by its pod's label, leader-label.ts: a standby that is never Ready would stall a rollout)
 *
 * With a secret, a webhook call must prove it knows it, as the git hosts
 * do: GitHub and Gitea sign the body (`X-Hub-Signature-256: sha256=<HMAC-SHA256>`),
 * GitLab sends the secret itself (`X-Gitlab-Token`). The body is not read
 * otherwise: any push may change any upstream, and listing them is cheap.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import type { IncomingMessage, Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface WebhookHandlers {
  /** True while this replica leads. */
  leading(): boolean
  /** A push was announced. */
  pushed(): void
}

/** Bodies larger than this are refused (a push event is a few kilobytes to a few hundred). */
const maxBody = 5 * 2 ** 20

/** Listens on `address` (`HOST:PORT` or `:PORT`); resolves once listening, with the server and the port it got. */
export async function listen(
  address: string,
  secret: string | undefined,
  handlers: WebhookHandlers,
): Promise<{ server: Server; port: number }> {
  const match = /^(.*):(\d+)$/.exec(address)
  if (!match) throw new Error(`--listen ${address}: expected HOST:PORT or :PORT`)
  const server = createServer((req, res) => {
    const answer = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
      res.end(`${text}\n`)
    }
    const path = (req.url ?? '').replace(/\?.*$/, '')
    if (req.method === 'GET' && path === '/healthz') return answer(200, 'ok')
    if (req.method === 'GET' && path === '/readyz') return answer(200, handlers.leading() ? 'leading' : 'standing by')
    if (path !== '/webhook') return answer(404, 'not found: POST /webhook, GET /healthz, GET /readyz')
    if (req.method !== 'POST') return answer(405, 'POST /webhook')
    readBody(req).then(
      (body) => {
        if (body === undefined) return answer(413, 'too large')
        if (secret !== undefined && !authentic(req, body, secret))
          return answer(401, 'no valid X-Hub-Signature-256 or X-Gitlab-Token')
        if (!handlers.leading()) return answer(503, 'standing by: another replica leads')
        handlers.pushed()
        answer(202, 'listing the upstream repositories')
      },
      () => answer(400, 'cannot read the request'),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(Number(match[2]), match[1] || undefined, () => resolve())
  })
  return { server, port: (server.address() as AddressInfo).port }
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBody) chunks.push(chunk)
    })
    req.on('end', () => resolve(size > maxBody ? undefined : Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

/** True when the call carries the secret: GitHub's and Gitea's signature of the body, or GitLab's token. */
export function authentic(req: Pick<IncomingMessage, 'headers'>, body: Buffer, secret: string): boolean {
  const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
  const signature = req.headers['x-hub-signature-256']
  if (typeof signature === 'string')
    return same(signature, `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`)
  const token = req.headers['x-gitlab-token']
  return typeof token === 'string' && same(token, secret)
}
