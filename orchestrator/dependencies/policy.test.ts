/** DependencyPolicy: which policy a repository gets, and how each field changes its dependency plan. */
import { readRepository } from '../../functions/api/repository.js'
import { KubeObject } from '../../functions/krm/index.js'
import type { PlanCatalog } from '../../functions/dependency-check/index.js'
import { planRepository } from './repository-plan.js'
import type { RepositoryState } from './repository-plan.js'
import { catalogs, context, monitor, present, source } from './planning.fixtures.js'
import { defaultRepositoryPolicy, PolicyIndex, readFleetPolicies, repositoryPolicy } from './policy.js'

function policy(name: string, spec: Record<string, unknown>): KubeObject {
  return KubeObject.fromObject({
    apiVersion: 'kpt-variants.dev/v1alpha1',
    kind: 'DependencyPolicy',
    metadata: { name, namespace: 'default' },
    spec,
  })
}

function repository(name: string, labels: Record<string, string> = {}) {
  const read = readRepository(
    KubeObject.fromObject({
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'Repository',
      metadata: { name, namespace: 'default', labels },
      spec: { deployment: true, git: { repo: `../repos/${name}` } },
    }),
  )
  if (!read.ok) throw new Error('bad repository')
  return read.value
}

const policyOf = (objects: KubeObject[], repo = repository('edge-01', { env: 'prod' })) =>
  repositoryPolicy(readFleetPolicies(objects), repo)

describe('which DependencyPolicy a repository gets', () => {
  test('without policies, today’s behaviour: upgrades allowed, downgrades and prereleases not, install, no auto-upgrade', () => {
    expect(new PolicyIndex(readFleetPolicies([])).of(repository('edge-01')).policy).toBe(defaultRepositoryPolicy)
    expect(defaultRepositoryPolicy.resolver).toMatchObject({
      upgrades: 'Allow',
      downgrades: 'Deny',
      prereleases: 'Exclude',
      autoUpgrade: 'Never',
    })
    expect(defaultRepositoryPolicy.install).toBe(true)
  })

  test('by name beats by labels beats every repository, field by field; a policy selecting nothing does not count', () => {
    const { policy: p, warnings } = policyOf([
      policy('all', { upgrades: 'Deny', install: false, autoUpgrade: true }),
      policy('prod', { repositorySelector: { matchLabels: { env: 'prod' } }, upgrades: 'Allow', downgrades: 'Allow' }),
      policy('edge-01', { repositories: ['edge-01'], downgrades: 'Deny', prereleases: { identifiers: ['rc'] } }),
      policy('staging', { repositorySelector: { matchLabels: { env: 'staging' } }, install: true }),
      policy('other', { repositories: ['edge-02'], autoUpgrade: false }),
    ])
    expect(warnings).toEqual([])
    expect(p.resolver).toMatchObject({
      upgrades: 'Allow',
      downgrades: 'Deny',
      prereleases: { identifiers: ['rc'] },
      autoUpgrade: 'Dependencies',
    })
    expect(p.install).toBe(false)
    expect(p.setBy).toEqual({
      upgrades: 'DependencyPolicy default/prod',
      downgrades: 'DependencyPolicy default/edge-01',
      prereleases: 'DependencyPolicy default/edge-01',
      install: 'DependencyPolicy default/all',
      autoUpgrade: 'DependencyPolicy default/all',
    })
  })

  test('two policies of one precedence that disagree: the first by name wins, with a warning; pins and configurations per package', () => {
    const { policy: p, warnings } = policyOf([
      policy('b', { upgrades: 'Allow', pins: [{ package: 'cert-manager', version: 'v1.12.0' }] }),
      policy('a', {
        upgrades: 'Deny',
        pins: [
          { package: 'cert-manager', version: 'v1.14.0' },
          { package: 'istio', version: '~1.20' },
        ],
      }),
    ])
    expect(p.resolver.upgrades).toBe('Deny')
    expect([...p.pins].map(([pkg, { pin, from }]) => [pkg, pin.version, from])).toEqual([
      ['cert-manager', 'v1.14.0', 'DependencyPolicy default/a'],
      ['istio', '~1.20', 'DependencyPolicy default/a'],
    ])
    expect(warnings).toEqual([
      'DependencyPolicy default/b and DependencyPolicy default/a both select repository edge-01 as specifically and set upgrades differently: DependencyPolicy default/a wins (name order)',
      'DependencyPolicy default/b and DependencyPolicy default/a both select repository edge-01 as specifically and set pins[cert-manager] differently: DependencyPolicy default/a wins (name order)',
    ])
  })

  test('a policy of another namespace does not select the repository; one that cannot be read is an error naming its field', () => {
    const elsewhere = policy('x', { upgrades: 'Deny' })
    elsewhere.set(['metadata', 'namespace'], 'other')
    expect(policyOf([elsewhere]).policy.resolver.upgrades).toBe('Allow')
    const read = readFleetPolicies([
      policy('bad', {
        upgrades: 'Never',
        repositories: ['edge-01'],
        repositorySelector: { matchLabels: { env: 'prod' } },
        pins: [{ package: 'a', version: '1' }, { package: 'a', version: '2' }, { package: 'b' }],
        prereleases: { identifiers: [] },
        dependencies: [{ package: 'c', downstream: { repo: 'x' } }],
        clusterVersion: { label: 'a', field: 'b' },
      }),
    ])
    expect(read.policies).toEqual([])
    expect(read.errors).toEqual([
      'DependencyPolicy/default/bad: `spec.repositorySelector` must not be set together with `spec.repositories`: give one',
      'DependencyPolicy/default/bad: `spec.upgrades` must be Allow or Deny, got "Never"',
      'DependencyPolicy/default/bad: `spec.prereleases.identifiers` must list at least one prerelease identifier',
      'DependencyPolicy/default/bad: `spec.pins[1].package` duplicates `spec.pins[0].package` "a"',
      'DependencyPolicy/default/bad: `spec.pins[2].version` is required',
      'DependencyPolicy/default/bad: `spec.dependencies[0].downstream` is not a field of a configured dependency (package, packageContext, injectors, pipeline)',
      'DependencyPolicy/default/bad: `spec.clusterVersion` must set one of `label` or `field`',
    ])
  })
})

/** The plan of edge-01, whose variant needs cert-manager `range`, holding `held` (cert-manager installed as a dependency, at that version). */
function planWith(
  spec: Record<string, unknown>,
  options: { range?: string; held?: string; catalogs?: PlanCatalog[] } = {},
) {
  const { policy: p } = policyOf([policy('p', spec)])
  const state: RepositoryState = {
    repo: 'edge-01',
    targets: [monitor('edge-01', options.range ?? '>= v1.12.0')],
    present: options.held ? [present('edge-01', 'cert-manager', 'cert-manager', options.held, true)] : [],
  }
  return planRepository(
    state,
    context({ mode: 'check', policy: p, ...(options.catalogs ? { catalogs: options.catalogs } : {}) }),
  )
}

const moves = (plan: ReturnType<typeof planWith>) =>
  plan.steps.map((s) => `${s.action} ${s.package}${s.from ? ` ${s.from} ->` : ''} ${s.version ?? ''}`.trim())

describe('each policy field changes the plan', () => {
  test('upgrades: Deny fails the dependant that needs one, naming the policy and the upgrade it would take (Glasskube)', () => {
    expect(moves(planWith({}, { range: '>= v1.13.0', held: 'v1.12.0' }))).toEqual([
      'upgrade cert-manager v1.12.0 -> v1.14.0',
    ])
    const denied = planWith({ upgrades: 'Deny' }, { range: '>= v1.13.0', held: 'v1.12.0' })
    // Its package as it was still needs cert-manager: nothing is removed while it fails.
    expect(denied.steps).toEqual([])
    expect(denied.kept).toEqual([
      'cert-manager v1.12.0 at cert-manager (a variant of the repository failed: its package as it was may still need it)',
    ])
    expect(denied.failures.get('edge-01/edge-monitor')!.map((f) => f.message)).toEqual([
      expect.stringMatching(
        /^dependency edge-monitor@v1.0.0 -> cert-manager in repository edge-01: cert-manager \(required: >=1.13.0, actual: v1.12.0\).*: upgrades: Deny \(DependencyPolicy default\/p\); allowing it would upgrade cert-manager to v1.14.0$/,
      ),
    ])
  })

  test('downgrades: Allow moves a dependency that is too new down; Deny fails the dependant', () => {
    expect(planWith({}, { range: '< v1.13.0', held: 'v1.14.0' }).failures.size).toBe(1)
    expect(moves(planWith({ downgrades: 'Allow' }, { range: '< v1.13.0', held: 'v1.14.0' }))).toEqual([
      'downgrade cert-manager v1.14.0 -> v1.12.0',
    ])
  })

  test('prereleases: a release candidate is installed only where the policy admits it, by identifier too', () => {
    const withRc: PlanCatalog[] = [
      {
        name: 'rc',
        packages: [
          {
            name: 'cert-manager',
            versions: [{ version: 'v1.15.0-rc.1', provides: [], dependencies: [], source: source('cert-manager', 3) }],
          },
        ],
      },
      ...catalogs,
    ]
    expect(moves(planWith({}, { catalogs: withRc }))).toEqual(['install cert-manager v1.14.0'])
    expect(moves(planWith({ prereleases: 'Include' }, { catalogs: withRc }))).toEqual([
      'install cert-manager v1.15.0-rc.1',
    ])
    expect(moves(planWith({ prereleases: { identifiers: ['beta'] } }, { catalogs: withRc }))).toEqual([
      'install cert-manager v1.14.0',
    ])
    expect(moves(planWith({ prereleases: { identifiers: ['rc'] } }, { catalogs: withRc }))).toEqual([
      'install cert-manager v1.15.0-rc.1',
    ])
  })

  test('autoUpgrade moves a dependency that satisfies to the newest version every dependant accepts; by default it stays', () => {
    expect(moves(planWith({}, { held: 'v1.12.0' }))).toEqual([])
    expect(moves(planWith({ autoUpgrade: true }, { held: 'v1.12.0' }))).toEqual([
      'upgrade cert-manager v1.12.0 -> v1.14.0',
    ])
    // Not beyond a dependant's range.
    expect(moves(planWith({ autoUpgrade: true }, { held: 'v1.12.0', range: '< v1.14.0' }))).toEqual([])
    // Not past upgrades: Deny.
    expect(moves(planWith({ autoUpgrade: true, upgrades: 'Deny' }, { held: 'v1.12.0' }))).toEqual([])
  })

  test('a pin overrides what the dependant asks, and the conflict it causes is reported on the dependant', () => {
    const pinned = planWith({ pins: [{ package: 'cert-manager', version: 'v1.12.0' }] }, { range: '>= v1.13.0' })
    expect(pinned.failures.size).toBe(0)
    expect(moves(pinned)).toEqual(['install cert-manager v1.12.0'])
    const conflict =
      'pin cert-manager v1.12.0 (DependencyPolicy default/p spec.pins[0]) overrides edge-monitor@v1.0.0, which asks >= v1.13.0: cert-manager v1.12.0 is planned'
    expect(pinned.overrides).toEqual([conflict])
    expect(pinned.warnings.get('edge-01/edge-monitor')).toEqual([conflict])
    // A pin the dependant's range admits is no conflict.
    expect(planWith({ pins: [{ package: 'cert-manager', version: 'v1.14.0' }] }).overrides).toEqual([])
    // A pinned range: the newest version in it.
    expect(moves(planWith({ pins: [{ package: 'cert-manager', version: '~1.12' }] }))).toEqual([
      'install cert-manager v1.12.0',
    ])
  })

  test('a configured dependency the plan keeps is rendered again (configure); one someone installed on purpose is not', () => {
    const configured = { dependencies: [{ package: 'cert-manager', packageContext: { data: { issuer: 'x' } } }] }
    expect(planWith(configured, { held: 'v1.14.0' }).steps).toEqual([
      expect.objectContaining({
        action: 'configure',
        package: 'cert-manager',
        version: 'v1.14.0',
        source: source('cert-manager', 2),
        neededBy: ['edge-01/edge-monitor'],
      }),
    ])
    const { policy: p } = policyOf([policy('p', configured)])
    const mine = planRepository(
      {
        repo: 'edge-01',
        targets: [monitor('edge-01')],
        present: [present('edge-01', 'cert-manager', 'cert-manager', 'v1.14.0', false)],
      },
      context({ mode: 'check', policy: p }),
    )
    expect(mine.steps).toEqual([])
  })
})
