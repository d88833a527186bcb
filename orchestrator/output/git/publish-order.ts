/**
 * The order a repository's drafts are published in: each after the packages
 * it needs, as its draft's message declares them (`Package: <name>`,
 * `Requires: <name>`: messages.ts). A draft that needs a package whose own
 * draft is open and not published with it (or before it) is refused, as
 * publishing it would leave the branch with a package whose dependency is not
 * there; with `withNeeded` those drafts are published too.
 */
import type { DraftDeclaration } from './messages.js'

/** The order to publish in, the drafts each needs, and the refused ones with why. */
export interface PublishOrder {
  ordered: string[]
  needs: Map<string, string[]>
  refused: { package: string; reason: string }[]
}

/**
 * Orders `publish` (packages of the repository). `declared`: what each open
 * draft (and each draft this write makes) declares, by package; `branch`: the
 * draft branch a package's refusal names.
 */
export function publishOrder(
  publish: readonly string[],
  declared: ReadonlyMap<string, Pick<DraftDeclaration, 'name' | 'requires'>>,
  branch: (pkg: string) => string,
  withNeeded: boolean,
): PublishOrder {
  // Which draft provides each package name.
  const provider = new Map<string, string>()
  for (const [pkg, d] of declared) if (d.name) provider.set(d.name, pkg)
  const needed = (pkg: string) =>
    (declared.get(pkg)?.requires ?? []).flatMap((name) =>
      provider.has(name) && provider.get(name) !== pkg ? [[name, provider.get(name)!] as const] : [],
    )
  const chosen = new Set(publish)
  const ordered: string[] = []
  const refused: PublishOrder['refused'] = []
  const state = new Map<string, 'visiting' | 'ok' | 'refused'>()
  const refuse = (pkg: string, reason: string): false => {
    state.set(pkg, 'refused')
    refused.push({ package: pkg, reason })
    return false
  }
  const visit = (pkg: string): boolean => {
    const known = state.get(pkg)
    // A cycle of drafts needing each other is published together, in the order met.
    if (known === 'ok' || known === 'visiting') return true
    if (known === 'refused') return false
    state.set(pkg, 'visiting')
    for (const [name, other] of needed(pkg)) {
      if (withNeeded) chosen.add(other)
      if (!chosen.has(other))
        return refuse(
          pkg,
          `it needs ${name}, whose draft ${branch(other)} is not published: publish ${other} first, or with it`,
        )
      if (!visit(other)) return refuse(pkg, `it needs ${name}, whose draft ${branch(other)} cannot be published`)
    }
    state.set(pkg, 'ok')
    ordered.push(pkg)
    return true
  }
  for (const pkg of publish) visit(pkg)
  return { ordered, needs: new Map(ordered.map((pkg) => [pkg, needed(pkg).map(([, other]) => other)])), refused }
}
