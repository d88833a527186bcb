/**
 * `kpt-variants deps [REPO] (--fleet DIR | --cluster) [--out DIR]`: what a
 * downstream repository holds as a tree of packages, why one is there
 * (`--why PKG`), whether one can be deleted (`--can-delete PKG`, exit 1 with
 * its dependants when not), and with `--outdated` every package below the
 * newest version its constraints allow or the newest published. The fleet is
 * planned and the output opened as `status` opens it (`--out DIR`, else the
 * downstream repositories' published branches), and only read.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { defaultCacheDir } from '../cache/layout.js'
import { PolicyIndex, readFleetPolicies } from '../dependencies/policy.js'
import type { RenderScope } from '../plan/scope.js'
import type { RenderSettings } from '../run/settings.js'
import { loadAndPlan, setUpRun } from '../run/setup.js'
import type { Run } from '../run/setup.js'
import { canDelete, explain, findHeld, formatOutdated, formatTree, outdated, repositoryGraph } from '../status/deps.js'
import type { HeldPackage, OutdatedRow, RepositoryGraph } from '../status/deps.js'
import { publishedVersions, readRepositoryPackages } from '../status/read-deps.js'
import { UsageError } from './cli-io.js'
import { readClusterFleet } from './cluster-fleet.js'
import { existingOutDir, readSettings } from './read-settings.js'
import type { CliIO } from './cli-io.js'

/** The options commander parsed. */
export interface DepsOptions {
  fleet?: string
  cluster?: boolean
  kubeconfig?: string
  context?: string
  out?: string
  why?: string
  canDelete?: string
  outdated?: boolean
  json?: boolean
  cache?: string
  lockTimeout: number
  namespace?: string
}

/** Runs `deps`; resolves to 0, or 1 when `--can-delete` says no. */
export async function depsCommand(repo: string | undefined, options: DepsOptions, io: CliIO): Promise<number> {
  checkQuestion(repo, options)
  const outDir = existingOutDir(options.out, io)
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  const cluster = options.cluster ? await readClusterFleet(options, cacheDir, io) : undefined
  try {
    const fleetDir = cluster ? cluster.dir : resolve(io.cwd, options.fleet!)
    if (!existsSync(fleetDir) || !statSync(fleetDir).isDirectory())
      throw new UsageError(`fleet directory ${options.fleet} does not exist`)
    const lockTimeoutMs = options.lockTimeout * 1000
    const settings: RenderSettings = {
      ...readSettings({ fleetDir, outDir, cacheDir, lockTimeoutMs, namespace: options.namespace, io }),
      ...(cluster
        ? {
            fleetId: cluster.id,
            repositoryBase: io.cwd,
            clusterScoped: cluster.clusterScoped,
            servedKinds: cluster.servedKinds,
          }
        : {}),
    }
    const { run, names } = await openRepositoriesAsked(settings, repo)
    try {
      const graphs: RepositoryGraph[] = []
      for (const name of names) graphs.push(repositoryGraph(name, await readRepositoryPackages(run, name)))
      if (options.outdated) return await answerOutdated(run, graphs, options, io)
      return answerAbout(graphs[0]!, options, io)
    } finally {
      run.close()
    }
  } finally {
    cluster?.close()
  }
}

/** The options' usage errors: a fleet or a cluster, one question, a REPO unless --outdated. */
function checkQuestion(repo: string | undefined, options: DepsOptions): void {
  if (Boolean(options.fleet) === Boolean(options.cluster)) throw new UsageError('give either --fleet DIR or --cluster')
  if (!options.cluster && (options.kubeconfig !== undefined || options.context !== undefined))
    throw new UsageError('--kubeconfig and --context need --cluster')
  const questions = [options.why !== undefined, options.canDelete !== undefined, options.outdated === true]
  if (questions.filter(Boolean).length > 1) throw new UsageError('ask one of --why, --can-delete and --outdated')
  if (repo === undefined && !options.outdated)
    throw new UsageError('name the REPO (only --outdated reads every repository)')
}

/**
 * The fleet planned, and a run of it that opens only the repositories asked
 * about, `repo` or (none) every deployment repository, with their names;
 * with --git they are locked and fetched.
 */
async function openRepositoriesAsked(
  settings: RenderSettings,
  repo: string | undefined,
): Promise<{ run: Run; names: string[] }> {
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-deps-'))
  const planned = await loadAndPlan(settings, scratch).finally(() => rmSync(scratch, { recursive: true, force: true }))
  const names = repo !== undefined ? [repo] : downstreamNames(planned.fleet.repositories)
  for (const name of names)
    if (!planned.fleet.repositories.some((r) => r.name === name))
      throw new UsageError(`the fleet has no Repository ${JSON.stringify(name)}`)
  const scope: RenderScope = {
    variants: planned.plan.variants.filter((v) => names.includes(v.downstream.repo)).map((v) => v.key),
    repositories: names,
    packages: [],
    declared: true,
  }
  return { run: await setUpRun({ ...settings, scope }, { known: planned }), names }
}

/** One repository's answer: its tree, or why a package is there (--why), or whether it can be deleted (--can-delete). */
function answerAbout(graph: RepositoryGraph, options: DepsOptions, io: CliIO): number {
  const asked = options.why ?? options.canDelete
  if (asked === undefined) {
    const where = options.out !== undefined ? `--out ${options.out}` : 'its published branch'
    io.stdout(options.json ? `${JSON.stringify(graphJson(graph), null, 2)}\n` : formatTree(graph, where))
    return 0
  }
  const pkg = findHeld(graph, asked)
  if (!pkg)
    throw new UsageError(
      `repository ${graph.repo} holds no package ${JSON.stringify(asked)} (it holds: ${graph.packages.map((p) => p.name).join(', ') || 'nothing that declares itself'})`,
    )
  if (options.why !== undefined) {
    io.stdout(
      options.json
        ? `${JSON.stringify({ ...graphJson(graph), package: pkg, neededBy: graph.edges.filter((e) => e.to === pkg.path) }, null, 2)}\n`
        : explain(graph, pkg),
    )
    return 0
  }
  return answerCanDelete(graph, pkg, options, io)
}

/** `--can-delete`: 0 when nothing in the repository needs the package, else 1 with what does. */
function answerCanDelete(graph: RepositoryGraph, pkg: HeldPackage, options: DepsOptions, io: CliIO): number {
  const answer = canDelete(graph, pkg)
  if (options.json)
    io.stdout(
      `${JSON.stringify({ repository: graph.repo, package: pkg.name, path: pkg.path, canDelete: answer.ok, blocking: answer.blocking, notes: answer.notes }, null, 2)}\n`,
    )
  else {
    io.stdout(
      answer.ok
        ? `${pkg.name} can be deleted from ${graph.repo}: nothing there needs it\n`
        : `${pkg.name} cannot be deleted from ${graph.repo}:\n${answer.blocking.map((b) => `  ${b}\n`).join('')}`,
    )
    for (const note of answer.notes) io.stdout(`note: ${note}\n`)
  }
  return answer.ok ? 0 : 1
}

/** `--outdated`: every repository's rows, constrained by dependants, pins and the variants' own upstream choice. */
async function answerOutdated(
  run: Run,
  graphs: readonly RepositoryGraph[],
  options: DepsOptions,
  io: CliIO,
): Promise<number> {
  const { byName, byRevision } = await publishedVersions(run)
  const policies = new PolicyIndex(readFleetPolicies(run.fleet.objects))
  const rows: OutdatedRow[] = []
  for (const graph of graphs) {
    const repository = run.fleet.repositories.find((r) => r.name === graph.repo)!
    const { policy } = policies.of(repository)
    const constraints = new Map<string, { range: string; by: string }[]>()
    const add = (pkg: string, range: string, by: string) =>
      constraints.set(pkg, [...(constraints.get(pkg) ?? []), { range, by }])
    for (const [pkg, { pin, from }] of policy.pins) add(pkg, pin.version, `pin ${pin.version} (${from})`)
    for (const v of run.plan.variants) {
      if (v.downstream.repo !== graph.repo) continue
      const held = graph.packages.find((p) => p.path === `${v.downstream.repo}/${v.downstream.package}`)
      if (!held) continue
      if (v.version)
        add(held.name, v.version.constraint, `its PackageVariant follows ${JSON.stringify(v.version.constraint)}`)
      else {
        const at = byRevision.get(`${v.upstream.repository}|${v.upstream.packageName}|${v.upstream.revision}`)
        if (at) add(held.name, `=${at}`, `its PackageVariant renders ${v.upstream.ref}`)
      }
    }
    rows.push(...outdated(graph, byName, constraints, policy.resolver.prereleases))
  }
  io.stdout(options.json ? `${JSON.stringify({ outdated: rows }, null, 2)}\n` : formatOutdated(rows))
  return 0
}

function graphJson(graph: RepositoryGraph) {
  return {
    apiVersion: 'kpt-variants.dev/v1alpha1',
    kind: 'RepositoryDependencies',
    repository: graph.repo,
    packages: graph.packages.map((p) => ({
      name: p.name,
      path: p.path,
      ...(p.version ? { version: p.version } : {}),
      held: p.held,
      ...(p.owner ? { owner: p.owner } : {}),
      needs: graph.edges
        .filter((e) => e.from === p.path)
        .map((e) => ({
          asked: e.asked,
          range: e.range,
          ...(e.to ? { heldAt: e.to } : {}),
          ...(e.problem ? { problem: e.problem } : {}),
        })),
      neededBy: graph.edges.filter((e) => e.to === p.path).map((e) => ({ path: e.from, range: e.range })),
    })),
  }
}

/** The deployment repositories of the fleet, by name. */
function downstreamNames(repositories: readonly { name: string; deployment: boolean }[]): string[] {
  return [...new Set(repositories.filter((r) => r.deployment).map((r) => r.name))].sort()
}
