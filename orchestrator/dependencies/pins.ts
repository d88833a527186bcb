/**
 * A DependencyPolicy's pins (pure), as Carvel's PackageInstall `dependencies.override`
 * proposes them: a pinned package's version, range or digest replaces what
 * every dependant asks of it (the targets', the installed packages' and
 * every catalog version's dependencies), so the resolver plans the pin. What
 * the pin overrides is kept, and once the plan is made each dependant whose
 * own range the planned version does not satisfy is reported: the conflict
 * the pin causes, which it wins.
 */
import type { Dependency } from '../../functions/api/dependencies.js'
import type { DependencyPin } from '../../functions/api/dependency-policy.js'
import { parseConstraint, parseVersion, satisfies } from '../../functions/dependency-check/index.js'
import type { Plan, PlanInput } from '../../functions/dependency-check/index.js'

/** A dependant's range the pin replaced. */
export interface Overridden {
  /** The dependant, `name@version`. */
  dependant: string
  package: string
  /** Its own range (`""`: any version). */
  range: string
  pin: string
  /** `DependencyPolicy ns/name spec.pins[i]`. */
  by: string
}

/** The input with every dependency on a pinned package asking for the pin instead, and what each replaced. */
export function applyPins(
  input: PlanInput,
  pins: ReadonlyMap<string, { pin: DependencyPin; from: string }>,
): { input: PlanInput; overridden: Overridden[] } {
  if (pins.size === 0) return { input, overridden: [] }
  const overridden: Overridden[] = []
  const rewrite = (deps: readonly Dependency[], dependant: string): Dependency[] =>
    deps.map((dep) => {
      if (dep.type === 'AnyOf') return { ...dep, anyOf: rewrite(dep.anyOf, dependant) as typeof dep.anyOf }
      if (dep.type !== 'Package') return dep
      const pinned = pins.get(dep.name)
      if (!pinned || dep.version === pinned.pin.version) return dep
      overridden.push({
        dependant,
        package: dep.name,
        range: dep.version,
        pin: pinned.pin.version,
        by: `${pinned.from} ${pinned.pin.field}`,
      })
      return { ...dep, version: pinned.pin.version }
    })
  const label = (name: string, version?: string) => `${name}@${version ?? '(unversioned)'}`
  return {
    input: {
      ...input,
      targets: input.targets.map((t) =>
        t.manifest
          ? {
              ...t,
              manifest: { ...t.manifest, dependencies: rewrite(t.manifest.dependencies, label(t.package, t.version)) },
            }
          : t,
      ),
      installed: input.installed.map((i) =>
        i.dependencies ? { ...i, dependencies: rewrite(i.dependencies, label(i.package, i.version)) } : i,
      ),
      catalogs: input.catalogs.map((c) => ({
        ...c,
        packages: c.packages.map((p) => ({
          ...p,
          versions: p.versions.map((v) => ({ ...v, dependencies: rewrite(v.dependencies, label(p.name, v.version)) })),
        })),
      })),
    },
    overridden,
  }
}

/**
 * The overrides that matter once planned: a dependant the plan keeps or
 * installs whose own range does not admit the version the pin leads to. Each
 * as a sentence: `pin cert-manager v1.12.3 (DependencyPolicy default/edge spec.pins[0]) overrides nginx@v2.0.0, which asks >=1.13.0`.
 */
export function pinConflicts(
  plan: Plan,
  overridden: readonly Overridden[],
  installed: PlanInput['installed'],
): string[] {
  if (overridden.length === 0) return []
  const planned = new Map<string, string>()
  for (const i of installed) planned.set(i.package, i.version)
  for (const s of plan.install) planned.set(s.package, s.version)
  for (const s of [...plan.upgrade, ...plan.downgrade]) planned.set(s.package, s.to)
  const present = new Set([
    ...plan.packages.map((p) => `${p.package}@${p.version ?? '(unversioned)'}`),
    ...installed.map((i) => `${i.package}@${i.version}`),
    ...plan.install.map((s) => `${s.package}@${s.version}`),
    ...[...plan.upgrade, ...plan.downgrade].map((s) => `${s.package}@${s.to}`),
  ])
  const out: string[] = []
  for (const o of overridden) {
    if (!present.has(o.dependant)) continue
    const version = planned.get(o.package)
    const range = parseConstraint(o.range)
    const parsed = version ? parseVersion(version, { coerce: true }) : undefined
    if (range.ok && parsed && satisfies(parsed, range.constraint)) continue
    const text = `pin ${o.package} ${o.pin} (${o.by}) overrides ${o.dependant}, which asks ${o.range || '(any version)'}${version ? `: ${o.package} ${version} is planned` : ''}`
    if (!out.includes(text)) out.push(text)
  }
  return out
}
