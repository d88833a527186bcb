import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { outputGraph } from './dependency-graph.js'
import type { DeclaredPackage } from './dependency-graph.js'

const installed = parseObjects(
  source`
    apiVersion: kpt-variants.dev/v1alpha1
    kind: InstalledPackage
    metadata: {name: cert-manager-edge-01, labels: {kpt-variants.dev/repository: edge-01}}
    spec: {package: cert-manager, version: v1.12.3}
    ---
    apiVersion: kpt-variants.dev/v1alpha1
    kind: InstalledPackage
    metadata: {name: cert-manager-edge-02, labels: {kpt-variants.dev/repository: edge-02}}
    spec: {package: cert-manager, version: v1.12.3}
    ---
    apiVersion: kpt-variants.dev/v1alpha1
    kind: InstalledPackage
    metadata: {name: metrics-everywhere}
    spec: {package: metrics, version: v0.7.0}
    ---
    apiVersion: kpt-variants.dev/v1alpha1
    kind: InstalledPackage
    metadata: {name: unreadable}
    spec: {package: unversioned}
  `,
  'installed.yaml',
)

const nginx = (path: string): DeclaredPackage => ({
  path,
  manifest: {
    name: 'nginx',
    version: 'v2.0.0',
    namespace: '',
    dependencies: [
      { type: 'Package', name: 'cert-manager', version: '>= v1.13.0', optional: false },
      { type: 'GVK', gvk: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' }, optional: true },
    ],
  },
  installedAsDependency: false,
})
const certManager = (path: string): DeclaredPackage => ({
  path,
  manifest: { name: 'cert-manager', version: 'v1.14.4', namespace: '', dependencies: [] },
  installedAsDependency: true,
})

test("each repository's packages and what they require; what was installed outside git where the repository holds no package of its name", () => {
  expect(
    outputGraph([nginx('edge-02/nginx'), certManager('edge-02/cert-manager'), nginx('edge-01/nginx')], installed),
  ).toEqual([
    {
      name: 'edge-01',
      packages: [
        { name: 'cert-manager', version: 'v1.12.3', installedAsDependency: false, requires: [], outsideGit: true },
        { name: 'metrics', version: 'v0.7.0', installedAsDependency: false, requires: [], outsideGit: true },
        {
          name: 'nginx',
          version: 'v2.0.0',
          installedAsDependency: false,
          requires: [
            { name: 'cert-manager', range: '>= v1.13.0' },
            { name: 'monitoring.coreos.com/v1/ServiceMonitor', range: '' },
          ],
        },
      ],
    },
    {
      name: 'edge-02',
      packages: [
        { name: 'cert-manager', version: 'v1.14.4', installedAsDependency: true, requires: [] },
        { name: 'metrics', version: 'v0.7.0', installedAsDependency: false, requires: [], outsideGit: true },
        {
          name: 'nginx',
          version: 'v2.0.0',
          installedAsDependency: false,
          requires: [
            { name: 'cert-manager', range: '>= v1.13.0' },
            { name: 'monitoring.coreos.com/v1/ServiceMonitor', range: '' },
          ],
        },
      ],
    },
  ])
})

test('a repository where no package of the output declares itself has no graph, whatever was installed outside git', () => {
  expect(outputGraph([], installed)).toEqual([])
})
