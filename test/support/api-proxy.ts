/**
 * A plain-HTTP proxy in front of the real API server (kube-apiserver.ts) that
 * records every request and can act before forwarding one, or answer it
 * instead. It exists for what the server alone cannot do without timing
 * luck: let another writer change an object exactly between a run's read
 * and its write, so that the run's write meets a real 409 Conflict; answer
 * 429 (busy) as the server does for a moment after a CRD is made.
 */
import { createServer } from 'node:http'
import type { IncomingMessage, Server } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { KubeClient } from './kube-client.js'

/** An answer the proxy gives instead of the server's. */
export interface Answer {
  status: number
  headers?: Record<string, string>
  body: unknown
}

/** A request as forwarded, with the server's answer. */
export interface Proxied {
  method: string
  /** The path and query. */
  path: string
  status: number
}

export class ApiProxy {
  readonly requests: Proxied[] = []
  /** Runs (and is awaited) before a request is forwarded; an answer it returns is sent instead. */
  before: (method: string, path: string) => Promise<Answer | void> | Answer | void = () => undefined
  #server: Server | undefined

  constructor(private readonly upstream: KubeClient) {}

  get url(): string {
    return `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`
  }

  async start(): Promise<this> {
    this.#server = createServer((req, res) => {
      void this.#forward(req).then(
        (answer) => {
          if ('pipe' in answer) {
            res.writeHead(answer.statusCode!, answer.headers)
            answer.pipe(res)
            return
          }
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
          res.end(JSON.stringify(answer.body))
        },
        (err: Error) => {
          res.writeHead(502)
          res.end(err.message)
        },
      )
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    return this
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections()
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()))
  }

  async #forward(req: IncomingMessage): Promise<IncomingMessage | Answer> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const instead = await this.before(req.method!, req.url!)
    if (instead) {
      this.requests.push({ method: req.method!, path: req.url!, status: instead.status })
      return instead
    }
    const { host: _, ...headers } = req.headers
    return new Promise((resolve, reject) => {
      const forwarded = httpsRequest(
        `${this.upstream.url}${req.url}`,
        { method: req.method, headers, ca: this.upstream.ca },
        (answer) => {
          this.requests.push({ method: req.method!, path: req.url!, status: answer.statusCode! })
          resolve(answer)
        },
      )
      forwarded.on('error', reject)
      forwarded.end(Buffer.concat(chunks))
    })
  }
}
