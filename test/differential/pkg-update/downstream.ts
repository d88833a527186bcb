/** The downstream's local edits in the pkg-update differential test, and the conflicts they make with upstream's. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeTree } from '../../support/git-repo.js'

/** The downstream's own edits after `kpt pkg get`. */
export function editLocally(dir: string): void {
  const edit = (path: string, ...replacements: [from: string | RegExp, to: string][]) => {
    let text = readFileSync(join(dir, path), 'utf8')
    for (const [from, to] of replacements) {
      const next = text.replace(from, to)
      if (next === text) throw new Error(`${path}: ${String(from)} not found in:\n${text}`)
      text = next
    }
    writeFileSync(join(dir, path), text)
  }
  edit(
    'Kptfile',
    // [Kptfile] a label and a mutator added downstream; upstream bumps a function's tag.
    ['  annotations:\n', '  labels:\n    env: prod\n  annotations:\n'],
    [
      '  validators:\n',
      '    - image: gcr.io/kpt-fn/set-namespace:v0.4\n      configMap:\n        namespace: prod\n  validators:\n',
    ],
  )
  edit(
    'deployment.yaml',
    // [field deleted locally, upstream unchanged] tier; [field added locally] env label.
    ['    tier: frontend\n', '    env: prod\n'],
    // [primitive assoc list] finalizers: union.
    ['  - example.com/f1\n', '  - example.com/f1\n  - example.com/flocal\n'],
    // [scalar changed locally only] replicas.
    ['replicas: 1', 'replicas: 3'],
    // [field deleted locally, upstream changed] revisionHistoryLimit 5 -> 10 upstream.
    ['  revisionHistoryLimit: 5\n', ''],
    // [local sets null] progressDeadlineSeconds (upstream changed it).
    ['progressDeadlineSeconds: 600', 'progressDeadlineSeconds: null'],
    // [non-assoc list, only local changed] args.
    ['args: ["--port", "8080"]', 'args: ["--port", "8080", "--local"]'],
    // [scalar changed both sides] MODE a -> b here, -> c upstream.
    ['value: a\n', 'value: b\n'],
    // [assoc element removed upstream, local modified it] OLD.
    ['value: old\n', 'value: old-local\n'],
    // [assoc list: element added upstream + local env added] LOCAL env, exporter container upstream.
    [/(value: old-local\n)/, '$1        - name: LOCAL\n          value: "1"\n'],
    // [assoc element removed locally, changed upstream] the sidecar.
    ['      - name: sidecar\n        image: sidecar:1\n', ''],
  )
  edit(
    'service.yaml',
    // [assoc list by port+protocol] a local port; upstream changes port 80 and adds 443.
    [
      '    protocol: TCP\n',
      '    protocol: TCP\n  - name: metrics\n    port: 9090\n    targetPort: 9090\n    protocol: TCP\n',
    ],
  )
  edit(
    'configmap.yaml',
    // [field deleted locally, upstream changed] timeout "30" -> "60" upstream.
    ['  timeout: "30"\n', ''],
    // [field deleted upstream, local changed] removedlocal.
    ['removedlocal: x', 'removedlocal: y'],
    // [field added both, different values] feature; [field added locally] local-key.
    ['  untouched: "1"\n', '  untouched: "1"\n  feature: local\n  local-key: mine\n'],
    // [comment changed both sides] mode (local's stays); [head comment both] region (local's stays).
    ['# mode\n', '# mode-local\n'],
    ['  region: eu\n', '  # region-local\n  region: eu\n'],
  )
  edit(
    'monitor.yaml',
    // [non-assoc list, upstream changed] endpoints: the local one is lost.
    [
      '    interval: 30s\n  namespaceSelector',
      '    interval: 30s\n  - port: admin\n    interval: 60s\n  namespaceSelector',
    ],
    // [non-assoc list, only local changed] matchNames.
    ['matchNames: [prod]', 'matchNames: [prod, staging]'],
    // [map deleted upstream + local key] extra.
    ['    x: 1\n', '    x: 1\n    y: local\n'],
  )
  edit(
    'rbac.yaml',
    // [upstream moves a resource in its file] + a resource added locally to the same file.
    [
      /$/,
      '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: web-audit\n  namespace: prod\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: view\nsubjects:\n- kind: Group\n  name: auditors\n',
    ],
  )
  // [renamed locally] the kpt-merge comment keeps the upstream identity, upstream adds imagePullSecrets.
  edit('serviceaccount.yaml', ['  name: web\n', '  name: web-edge\n'])
  // [resource modified locally, deleted upstream] kept.
  edit('legacy.yaml', ['  k: v\n', '  k: local\n'])
  // [resource deleted locally, changed upstream] stays deleted.
  rmSync(join(dir, 'pdb.yaml'))
  // [resource added both sides] both.yaml; [resource added locally] local-cm.yaml.
  writeTree(dir, {
    'both.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: both\n  namespace: prod\ndata:\n  shared: local\n  mine: local\n',
    'local-cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  namespace: prod\ndata:\n  k: v\n',
  })
  // [subpackage] a local edit in a local subpackage, upstream changes another field.
  edit('sub/statefulset.yaml', ['replicas: 1', 'replicas: 3'])
  // [non-KRM] README edited on both sides (local wins), guide deleted locally (comes back), a local-only file.
  edit('README.md', ['v1 readme.', 'Edge readme.'])
  rmSync(join(dir, 'docs/guide.md'))
  writeTree(dir, { OWNERS: 'alice\n' })
}

/**
 * Conflicts our merge reports (kpt resolves each silently to upstream's value).
 * A field the downstream set to null is no conflict: it goes away whatever
 * upstream did, as in kpt.
 */
export const expectedConflicts = [
  ['both.yaml', 'data.shared'],
  ['configmap.yaml', 'data.feature'],
  ['configmap.yaml', 'data.removedlocal'],
  ['configmap.yaml', 'data.timeout'],
  ['deployment.yaml', 'spec.revisionHistoryLimit'],
  ['deployment.yaml', 'spec.template.spec.containers[name=nginx].env[name=MODE].value'],
  ['deployment.yaml', 'spec.template.spec.containers[name=nginx].env[name=OLD].value'],
  ['monitor.yaml', 'spec.endpoints'],
]
