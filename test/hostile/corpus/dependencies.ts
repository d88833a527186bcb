/** Hostile inputs for dependency-check: long dependency chains and cycles. */
import { list } from './build.js'
import type { HostileCase } from './build.js'

/** `count` packages in a catalog, each needing the next; `cycle` closes the chain. */
function dependencyChain(count: number, cycle: boolean): string {
  const packages: string[] = []
  for (let i = 0; i < count; i++) {
    const next = i + 1 < count ? `p${i + 1}` : cycle ? 'p0' : undefined
    packages.push(
      `    - name: p${i}\n      versions:\n      - version: 1.0.0${next ? `\n        dependencies:\n        - name: ${next}` : ''}`,
    )
  }
  return `- apiVersion: kpt-variants.dev/v1alpha1
  kind: PackageManifest
  metadata:
    name: root
    annotations:
      config.kubernetes.io/local-config: "true"
  spec:
    version: v1.0.0
    dependencies:
    - name: p0
- apiVersion: kpt-variants.dev/v1alpha1
  kind: PackageCatalog
  metadata:
    name: main
  spec:
    packages:
${packages.join('\n')}
`
}

export const dependencyCases: HostileCase[] = [
  // Dependencies (dependency-check; the others never read them).
  {
    name: 'a 10,000-package dependency chain',
    input: list(dependencyChain(10_000, false)),
    expect: 'any',
    process: 'only',
    programs: ['dependency-check'],
  },
  {
    name: 'a 10,000-package dependency cycle',
    input: list(dependencyChain(10_000, true)),
    expect: 'error',
    message: /cycle|CONFLICT|conflict/,
    process: 'only',
    programs: ['dependency-check'],
    // The exact resolver's proof that a 10,000-long cycle has no solution holds ~10,000 derived facts.
    heapMb: 1024,
  },
]
