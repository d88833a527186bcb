/**
 * The fleet of the `render --cluster` e2e tests (test/cluster.e2e.test.ts,
 * test/cluster-errors.e2e.test.ts): a real API server per test file
 * (kube-apiserver.ts) serving Porch's CRDs from deploy/crds, and for each
 * test a directory of its own with the upstream blueprints, the fleet
 * written as files and the same objects served (each PackageVariant with a
 * status the snapshot must leave out), and an admin's kubeconfig.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseValue } from '../../functions/krm/yaml/index.js'
import { repoRoot } from '../e2e/runner.js'
import { runCli } from './cli-run.js'
import type { Run } from './cli-run.js'
import { createBlueprints, fleetFiles, threeClusters } from './fleet.js'
import { writeTree } from './git-repo.js'
import { KubeApiServer } from './kube-apiserver.js'
import type { Json } from './kube-client.js'
import { schemalessCrd } from './schemaless-crd.js'
import { source } from './source.js'

export const timeout = 120_000

const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(dir, f))
const documents = (file: string) => parseValue(readFileSync(file, 'utf8'), { stream: true }) as Json[]

const variant = (name: string, namespace: string, revision: number) => source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: ${name}
    namespace: ${namespace}
  spec:
    upstream: {repo: blueprints, package: nginx, revision: ${revision}}
    downstream: {repo: edge-01, package: ${name}}
    injectors:
    - {group: "", kind: ConfigMap, name: us-east1-endpoints}
`

/** A status for a served PackageVariant: the snapshot must leave it out. */
const pendingStatus = {
  conditions: [
    { type: 'Ready', status: 'Unknown', reason: 'Pending', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
  ],
}

/** The fleet's files: the clusters' set, a standalone variant, one whose upstream revision does not exist, one in another namespace. */
function clusterFleetFiles(dir: string): Record<string, string> {
  const files = fleetFiles({
    clusters: [...threeClusters, { name: 'core-01', region: 'us-east1', siteType: 'core' }],
    extra: {
      'variants.yaml': [
        variant('standalone', 'default', 2),
        variant('missing', 'default', 7),
        variant('lonely', 'other', 1),
      ].join('---\n'),
    },
  })
  // Absolute repository paths: a directory resolves relative ones against itself, a cluster against the working directory.
  for (const [name, text] of Object.entries(files))
    files[name] = text.replaceAll('repo: ../repos/', `repo: ${dir}/repos/`)
  return files
}

/** One test file's server, and the directory and objects of the test running. */
export class ClusterFleet {
  #server: KubeApiServer | undefined
  dir = ''
  /** The fleet's objects as served. */
  objects: Json[] = []

  get server(): KubeApiServer {
    if (!this.#server) throw new Error('the API server is not started (beforeAll)')
    return this.#server
  }

  /** Starts the server with the CRDs and the namespace `other`. */
  async start(): Promise<void> {
    this.#server = await KubeApiServer.start()
    await this.server.apply([
      ...yamlFiles(join(repoRoot, 'deploy', 'crds')).flatMap(documents),
      schemalessCrd('infra.nephio.org', 'WorkloadCluster'),
    ])
    await this.server.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } }])
  }

  async stop(): Promise<void> {
    await this.#server?.stop()
  }

  /** A test's directory: the blueprints, the fleet as files, the same objects served, the admin's kubeconfig. */
  async create(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'kpt-variants-cluster-e2e-'))
    await createBlueprints(join(this.dir, 'repos', 'blueprints'))
    const files = clusterFleetFiles(this.dir)
    writeTree(join(this.dir, 'fleet'), files)
    this.objects = Object.values(files).flatMap((text) => parseValue(text, { stream: true }) as Json[])
    for (const o of this.objects) if (o['kind'] === 'PackageVariant') o['status'] = structuredClone(pendingStatus)
    await this.server.apply(this.objects)
    this.server.writeKubeconfig(join(this.dir, 'kubeconfig'))
  }

  /** Deletes the test's objects and directory. */
  async remove(): Promise<void> {
    await this.server.delete(this.objects)
    rmSync(this.dir, { recursive: true, force: true })
  }

  /** `kpt-variants render ARGS` in the test's directory, with its kubeconfig and a cache of its own. */
  render(...args: string[]): Promise<Run> {
    return runCli(this.dir, ['render', ...args], {
      env: { XDG_CACHE_HOME: join(this.dir, 'cache'), KUBECONFIG: join(this.dir, 'kubeconfig') },
      keepFinalNewline: true,
    })
  }

  /** A PackageVariant or PackageVariantSet as the server holds it now. */
  stored(kind: 'PackageVariant' | 'PackageVariantSet', namespace: string, name: string): Promise<Json | undefined> {
    return this.server.get({
      apiVersion: kind === 'PackageVariantSet' ? 'config.porch.kpt.dev/v1alpha2' : 'config.porch.kpt.dev/v1alpha1',
      kind,
      metadata: { name, namespace },
    })
  }
}

/** Registers the hooks of a suite of the fleet (inside its describe) and returns it. */
export function useClusterFleet(): ClusterFleet {
  const fleet = new ClusterFleet()
  beforeAll(() => fleet.start(), timeout)
  afterAll(() => fleet.stop(), timeout)
  beforeEach(() => fleet.create(), timeout)
  afterEach(() => fleet.remove(), timeout)
  return fleet
}

/** An object's conditions, one line each. */
export const conditions = (o: Json | undefined): string[] =>
  (o?.['status']?.['conditions'] ?? []).map((c: Json) => `${c['type']}=${c['status']} ${c['reason']}: ${c['message']}`)

/** A `--json` report's variants, one line each: subject, status, path. */
export const variants = (stdout: string): string[] =>
  (JSON.parse(stdout) as { variants: Json[] }).variants.map((v) => `${v['subject']} ${v['status']} ${v['path'] ?? ''}`)

/** A service account bound to a ClusterRole of `rules`, and its token once RBAC allows the first rule. */
export async function serviceAccount(server: KubeApiServer, name: string, rules: Json[]): Promise<string> {
  const subject = { kind: 'ServiceAccount', name, namespace: 'default' }
  await server.apply([
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'default' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [subject],
    },
  ])
  const rule = rules[0]!
  const { group, resource, verb } = {
    group: rule['apiGroups'][0],
    resource: rule['resources'][0],
    verb: rule['verbs'][0],
  }
  await server.waitForAccess(`system:serviceaccount:default:${name}`, { verb, group, resource }, true)
  return server.token('default', name)
}
