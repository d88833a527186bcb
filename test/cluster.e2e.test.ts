/**
 * `kpt-variants render --cluster` end to end, as a real process, against a
 * real Kubernetes API server (test/support/kube-apiserver.ts) with Porch's
 * CRDs from deploy/crds, reached through a kubeconfig by the real
 * @kubernetes/client-node (the fleet: test/support/cluster-fleet.ts). The
 * same objects written as a fleet directory render byte for byte the same
 * packages; status comes back through the status subresource; a scope, a
 * dry run, an unserved kind, --git. What the server refuses or fails is
 * test/cluster-errors.e2e.test.ts's.
 */
import { join } from 'node:path'
import { conditions, serviceAccount, timeout, useClusterFleet, variants } from './support/cluster-fleet.js'
import { threeClusters } from './support/fleet.js'
import { git, readTreeWithModes } from './support/git-repo.js'
import { kubeApiServerBuilt, kubeApiServerMissing } from './support/kube-apiserver.js'
import { describeIfAvailable } from './support/requires.js'

const fleetLists = {
  apiGroups: ['config.porch.kpt.dev', 'infra.nephio.org', '', 'kpt-variants.dev'],
  resources: [
    'repositories',
    'packagevariantsets',
    'packagevariants',
    'workloadclusters',
    'configmaps',
    'packagecatalogs',
    'installedpackages',
    'clusterapis',
    'dependencypolicies',
    'rollouts',
  ],
  verbs: ['list'],
}

const suite = describeIfAvailable(kubeApiServerBuilt(), kubeApiServerMissing)

suite('render --cluster against a real API server', () => {
  const fleet = useClusterFleet()
  const statusPatches = async (since: number) =>
    (await fleet.server.auditEvents(since)).filter((e) => e.verb === 'patch' && e.objectRef?.subresource === 'status')

  test(
    'the fleet served by the API server renders byte for byte as the same objects in a directory; status is written back',
    async () => {
      const fromDir = await fleet.render('fleet', '--out', 'from-dir', '--json')
      const before = (await fleet.server.auditEvents()).length
      const fromCluster = await fleet.render('--cluster', '--out', 'from-cluster', '--json')
      expect(fromCluster.exitCode).toBe(1)
      expect(fromDir.exitCode).toBe(1)
      const files = readTreeWithModes(join(fleet.dir, 'from-cluster'))
      expect([...files.keys()].filter((f) => f.endsWith('/Kptfile')).sort()).toEqual([
        'edge-01/nginx/Kptfile',
        'edge-01/standalone/Kptfile',
        'edge-02/nginx/Kptfile',
        'edge-03/nginx/Kptfile',
      ])
      expect(files).toEqual(readTreeWithModes(join(fleet.dir, 'from-dir')))
      expect(variants(fromCluster.stdout)).toEqual(variants(fromDir.stdout))
      expect(fromCluster.stderr).toContain(
        `status: 4 of 4 changed PackageVariant(s) and PackageVariantSet(s) written to ${fleet.server.url}`,
      )

      // The status subresource, as merge patches, as the server logged them.
      const patches = await statusPatches(before)
      expect(patches.map((e) => e.requestURI).sort()).toEqual([
        '/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/missing/status',
        '/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status',
        '/apis/config.porch.kpt.dev/v1alpha1/namespaces/other/packagevariants/lonely/status',
        '/apis/config.porch.kpt.dev/v1alpha2/namespaces/default/packagevariantsets/nginx/status',
      ])
      expect(patches.map((e) => e.responseStatus?.code)).toEqual([200, 200, 200, 200])
      const standalone = await fleet.stored('PackageVariant', 'default', 'standalone')
      expect(conditions(standalone)).toEqual([
        'Ready=True NoErrors: successfully ensured downstream package variant',
        'Stalled=False Valid: all validation checks passed',
      ])
      expect(standalone!['status']['downstreamTargets']).toEqual([{ name: 'edge-01/standalone' }])
      expect(conditions(await fleet.stored('PackageVariant', 'default', 'missing'))).toEqual([
        'Ready=False Error: invalid packagevariant object',
        expect.stringMatching(/^Stalled=True ValidationError: could not find upstream package revision .*Revision:7/),
      ])
      expect(conditions(await fleet.stored('PackageVariantSet', 'default', 'nginx'))).toEqual([
        'Stalled=False Valid: all validation checks passed',
        'Ready=True Reconciled: package variants successfully reconciled',
      ])

      // Again: every package unchanged, no status changes, nothing written.
      const second = (await fleet.server.auditEvents()).length
      const again = await fleet.render('--cluster', '--out', 'from-cluster', '--json')
      expect(variants(again.stdout).filter((v) => v.includes(' created ') || v.includes(' updated '))).toEqual([])
      expect(await statusPatches(second)).toEqual([])
      expect(again.stderr).toContain('status: 0 of 0 changed')
    },
    timeout,
  )

  test(
    '--namespace reads one namespace; --dry-run writes no status; a status write RBAC refuses is reported and fails the run',
    async () => {
      const before = (await fleet.server.auditEvents()).length
      const dry = await fleet.render('--cluster', '-n', 'other', '--out', 'out', '--dry-run', '--json')
      expect(variants(dry.stdout)).toEqual(['PackageVariant other/lonely failed edge-01/lonely'])
      const events = await fleet.server.auditEvents(before)
      const lists = events.filter((e) => e.verb === 'list')
      // No set in `other`: no WorkloadClusters to list; its variant injects a ConfigMap; deploy/crds serves the dependency and rollout kinds.
      expect(lists.map((e) => e.objectRef?.resource).sort()).toEqual([
        'clusterapis',
        'configmaps',
        'dependencypolicies',
        'installedpackages',
        'packagecatalogs',
        'packagevariants',
        'packagevariantsets',
        'repositories',
        'rollouts',
      ])
      expect(lists.every((e) => e.objectRef?.namespace === 'other')).toBe(true)
      expect(events.filter((e) => e.verb === 'patch')).toEqual([])

      // Allowed to write the status of every PackageVariant but one (RBAC's resourceNames).
      const token = await serviceAccount(fleet.server, 'all-but-standalone', [
        fleetLists,
        {
          apiGroups: ['config.porch.kpt.dev'],
          resources: ['packagevariants/status'],
          resourceNames: ['missing', 'lonely'],
          verbs: ['patch'],
        },
        { apiGroups: ['config.porch.kpt.dev'], resources: ['packagevariantsets/status'], verbs: ['patch'] },
      ])
      fleet.server.writeKubeconfig(join(fleet.dir, 'kubeconfig'), { token })
      const run = await fleet.render('--cluster', '--namespace', 'default', '--out', 'out')
      expect(run.exitCode).toBe(1)
      expect(run.stderr).toContain(
        `kpt-variants: PackageVariant default/standalone: status not written: cannot patch /apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status on ${fleet.server.url}: forbidden: ` +
          'packagevariants.config.porch.kpt.dev "standalone" is forbidden: User "system:serviceaccount:default:all-but-standalone" cannot patch resource "packagevariants/status" in API group "config.porch.kpt.dev" in the namespace "default"\n',
      )
      expect(readTreeWithModes(join(fleet.dir, 'out')).has('edge-01/standalone/Kptfile')).toBe(true)
      expect(conditions(await fleet.stored('PackageVariantSet', 'default', 'nginx'))).toContain(
        'Ready=True Reconciled: package variants successfully reconciled',
      )
    },
    timeout,
  )

  test(
    "a set whose target kind the server does not serve fails with Porch's NoMatchingTargets and keeps its packages; a package not ready leaves its PackageVariant not Ready",
    async () => {
      expect((await fleet.render('--cluster', '--out', 'out')).exitCode).toBe(1) // `missing` fails, as above
      const rendered = readTreeWithModes(join(fleet.dir, 'out'))
      // The region's endpoints gone from the cluster: the standalone variant's required injection point is unmet.
      const east = fleet.objects.find(
        (o) => o['kind'] === 'ConfigMap' && o['metadata']['name'] === 'us-east1-endpoints',
      )!
      await fleet.server.delete([east])
      // A typo in the set's kind: no such kind is served (discovery).
      const set = fleet.objects.find((o) => o['kind'] === 'PackageVariantSet')!
      const typo = structuredClone(set)
      typo['spec']['targets'][0]['objectSelector']['kind'] = 'WorkloadClustr'
      await fleet.server.apply([typo])
      try {
        const run = await fleet.render('--cluster', '--out', 'out', '--json')
        expect(run.exitCode).toBe(1)
        const message =
          'spec.targets[0].objectSelector: no matches for kind "WorkloadClustr" in version "infra.nephio.org/v1alpha1"'
        expect(run.stderr).toContain(`PackageVariantSet default/nginx: ${message}`)
        expect(conditions(await fleet.stored('PackageVariantSet', 'default', 'nginx'))).toEqual([
          `Stalled=True NoMatchingTargets: ${message}`,
          `Ready=False NoMatchingTargets: ${message}`,
        ])
        const notReady =
          'not ready: config.injection.ConfigMap.region-endpoints False: no resource matched any injection selector for this injection point'
        expect(conditions(await fleet.stored('PackageVariant', 'default', 'standalone'))).toEqual([
          `Ready=False NotReady: ${notReady}`,
          'Stalled=False Valid: all validation checks passed',
        ])
        // Nothing of the set was deleted: its three packages are as they were.
        const now = readTreeWithModes(join(fleet.dir, 'out'))
        for (const c of threeClusters)
          for (const [file, content] of rendered)
            if (file.startsWith(`${c.name}/nginx/`)) expect(now.get(file)).toEqual(content)
      } finally {
        await fleet.server.apply([set, east])
      }
    },
    timeout,
  )

  test(
    '--git: drafts in the downstream repositories; a relative repository path is relative to the working directory',
    async () => {
      for (const name of ['edge-01', 'edge-02', 'edge-03'])
        await git(fleet.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
      // Porch's CRD makes spec.git.repo immutable: the Repositories are made anew.
      const repositories = fleet.objects.filter((o) => o['kind'] === 'Repository')
      await fleet.server.delete(repositories)
      await fleet.server.apply(
        repositories.map((o) => ({
          ...o,
          spec: { ...o['spec'], git: { ...o['spec']['git'], repo: `repos/${o['metadata']['name']}` } },
        })),
      )
      const run = await fleet.render('--cluster', '--git', '--json')
      expect(run.exitCode).toBe(1)
      expect(variants(run.stdout).filter((v) => v.includes(' created '))).toEqual([
        'PackageVariant default/nginx-edge-01-nginx created edge-01/nginx',
        'PackageVariant default/standalone created edge-01/standalone',
        'PackageVariant default/nginx-edge-02-nginx created edge-02/nginx',
        'PackageVariant default/nginx-edge-03-nginx created edge-03/nginx',
      ])
      expect(
        (await git(join(fleet.dir, 'repos', 'edge-01.git'), 'branch', '--list', 'drafts/*'))
          .split('\n')
          .map((b) => b.trim())
          .filter(Boolean),
      ).toEqual(['drafts/nginx/packagevariant-1', 'drafts/standalone/packagevariant-1'])
    },
    timeout,
  )
})
