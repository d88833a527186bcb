/**
 * Differential test: the orchestrator's 3-way merge (`updatePackage`) gives
 * what `kpt pkg update` (strategy resource-merge) writes, for a downstream made
 * by `kpt pkg get --for-deployment` and then edited locally, updated from
 * upstream tag pkg/v1 to pkg/v2.
 *
 * Compared: the set of file paths; every YAML file (and Kptfile) semantically,
 * document by document as JavaScript values (formatting aside: kpt
 * re-serializes every local file and re-encodes the Kptfile from its struct,
 * while we keep the downstream's bytes and layout, on purpose); the comments
 * of every resource file, in order; every other file byte for byte, with its
 * mode. Where kpt is clearly wrong we differ on purpose: `knownDifferences`
 * asserts both results.
 *
 * The packages exercise the rows of the outcome table of kpt's field merge
 * (`.scratch/kpt-pkg-spec.md` B2.1), the per-resource decisions (B1.6), the
 * non-KRM file sync (B1.8), the Kptfile merge (B1.7) and a local subpackage.
 * Each case is named in a comment where it is set up (`[case]`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { isNode, parseAllDocuments, visit } from 'yaml'
import { updatePackage } from '../../orchestrator/merge/update.js'
import type { UpdateResult } from '../../orchestrator/merge/update.js'
import { readPackageDirectory } from '../../orchestrator/package/directory.js'
import { fileText, gitPackageFiles } from '../../orchestrator/package/files.js'
import type { PackageFile, PackageFiles } from '../../orchestrator/package/files.js'
import { GitSource } from '../../orchestrator/upstream/git-source.js'
import { createRepo, git, writeTree } from '../support/git-repo.js'
import type { TreeSpec } from '../support/git-repo.js'
import { source } from '../support/source.js'

const v1: TreeSpec = {
  'pkg/Kptfile': source`
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: web
      annotations:
        config.kubernetes.io/local-config: "true"
    info:
      description: Web tier v1
    pipeline:
      mutators:
      - image: gcr.io/kpt-fn/set-labels:v0.1
        configMap:
          app: web
      validators:
      - image: gcr.io/kpt-fn/kubeval:v0.1
  `,
  'pkg/deployment.yaml': source`
    # The web tier.
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web # the name
      namespace: prod
      labels:
        app: web
        tier: frontend
      finalizers:
      - example.com/f1
    spec:
      replicas: 1
      paused: false
      revisionHistoryLimit: 5
      progressDeadlineSeconds: 600
      strategy:
        type: Recreate
      selector:
        matchLabels:
          app: web
      template:
        metadata:
          labels:
            app: web
        spec:
          containers:
          - name: nginx
            image: nginx:1.14 # pinned
            args: ["--port", "8080"]
            command:
            - nginx
            env:
            - name: LOG_LEVEL
              value: info
            - name: MODE
              value: a
            - name: OLD
              value: old
            ports:
            - containerPort: 8080
              name: http
              protocol: TCP
            volumeMounts:
            - name: data
              mountPath: /data
          - name: sidecar
            image: sidecar:1
          volumes:
          - name: data
            emptyDir: {}
  `,
  'pkg/service.yaml': source`
    apiVersion: v1
    kind: Service
    metadata:
      name: web
      namespace: prod
    spec:
      selector:
        app: web
      ports:
      - name: http
        port: 80
        targetPort: 8080
        protocol: TCP
  `,
  'pkg/metrics-service.yaml': source`
    apiVersion: v1
    kind: Service
    metadata:
      name: web-metrics
      namespace: prod
    spec:
      selector:
        app: web
      ports:
      - name: metrics
        port: 9090
      - name: admin
        port: 9091
        protocol: TCP
  `,
  'pkg/configmap.yaml': source`
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: web-config
      namespace: prod
    data:
      # log level
      level: info # the default
      greeting: "hello"
      timeout: "30"
      removed: x
      removedlocal: x
      untouched: "1"
      mode: v # mode
      region: eu
  `,
  'pkg/monitor.yaml': source`
    apiVersion: monitoring.coreos.com/v1
    kind: ServiceMonitor
    metadata:
      name: web
      namespace: prod
    spec:
      selector:
        matchLabels:
          app: web
      endpoints:
      - port: http
        interval: 30s
      - port: metrics
        interval: 30s
      namespaceSelector:
        matchNames: [prod]
      jobLabel: app
      sampleLimit: 1
      extra:
        x: 1
      gone:
        r: 1
  `,
  'pkg/rbac.yaml': source`
    apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata:
      name: web
      namespace: prod
    rules:
    - apiGroups: [""]
      resources: [configmaps]
      verbs: [get]
    ---
    apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata:
      name: web
      namespace: prod
    roleRef:
      apiGroup: rbac.authorization.k8s.io
      kind: Role
      name: web
    subjects:
    - kind: ServiceAccount
      name: web
  `,
  'pkg/serviceaccount.yaml': source`
    apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: web
      namespace: prod
  `,
  'pkg/pdb.yaml': source`
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata:
      name: web
      namespace: prod
    spec:
      minAvailable: 1
  `,
  'pkg/old-secret.yaml': source`
    apiVersion: v1
    kind: Secret
    metadata:
      name: old
      namespace: prod
    stringData:
      k: v
  `,
  'pkg/legacy.yaml': source`
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: legacy
      namespace: prod
    data:
      k: v
  `,
  'pkg/sub/Kptfile': source`
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: db
    info:
      description: db v1
  `,
  'pkg/sub/statefulset.yaml': source`
    apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: db
      namespace: prod
    spec:
      replicas: 1
      serviceName: db
      template:
        spec:
          containers:
          - name: postgres
            image: postgres:14
  `,
  'pkg/.krmignore': 'raw/\n',
  'pkg/raw/values.yaml': 'replicas: 1\nimage: nginx\n',
  'pkg/README.md': '# Web\n\nv1 readme.\n',
  'pkg/NOTES.txt': 'notes v1\n',
  'pkg/CHANGELOG.md': '## v1\n',
  'pkg/docs/guide.md': 'guide v1\n',
  'pkg/.gitignore': 'tmp/\n',
  'pkg/values.json': '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json-values","namespace":"prod"},"data":{"replicas":"1"}}',
  'pkg/scripts/check.sh': { text: '#!/bin/sh\necho v1\n', executable: true },
}

/** v2 over v1; `undefined` deletes a file. */
const v2: Record<string, TreeSpec[string] | undefined> = {
  ...v1,
  // [Kptfile] description changed, site added, a function's tag and config bumped, a validator added.
  'pkg/Kptfile': source`
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: web
      annotations:
        config.kubernetes.io/local-config: "true"
    info:
      description: Web tier v2
      site: https://example.com/web
    pipeline:
      mutators:
      - image: gcr.io/kpt-fn/set-labels:v0.2
        configMap:
          app: web
          tier: frontend
      validators:
      - image: gcr.io/kpt-fn/kubeval:v0.1
      - image: gcr.io/kpt-fn/gatekeeper:v0.2
  `,
  // [scalar changed upstream only] image (with its line comment); [upstream sets null] paused;
  // [field added upstream] minReadySeconds, label up: y; [new map] rollingUpdate; [non-assoc list,
  // upstream changed] command; [assoc list: upstream reorder] env; [merge key changed] volumeMount
  // /data -> /var/data; [element added upstream] port 8443, the exporter container.
  'pkg/deployment.yaml': source`
    # The web tier.
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web # the name
      namespace: prod
      labels:
        app: web
        tier: frontend
        up: y
      finalizers:
      - example.com/f1
      - example.com/fup
    spec:
      replicas: 1
      paused: null
      minReadySeconds: 5
      revisionHistoryLimit: 10
      progressDeadlineSeconds: 300
      strategy:
        type: RollingUpdate
        rollingUpdate:
          maxUnavailable: 0
          maxSurge: 1
      selector:
        matchLabels:
          app: web
      template:
        metadata:
          labels:
            app: web
        spec:
          containers:
          - name: nginx
            image: nginx:1.25 # pinned, bumped
            args: ["--port", "8080"]
            command:
            - nginx
            - -g
            - daemon off;
            env:
            - name: MODE
              value: c
            - name: LOG_LEVEL
              value: info
            ports:
            - containerPort: 8080
              name: http
              protocol: TCP
            - containerPort: 8443
              protocol: TCP
            volumeMounts:
            - name: data
              mountPath: /var/data
          - name: sidecar
            image: sidecar:2
          - name: exporter
            image: exporter:1
            ports:
            - containerPort: 9113
          volumes:
          - name: data
            emptyDir: {}
  `,
  // [assoc list by port+protocol] port 80 changed, 443 added; a field added.
  'pkg/service.yaml': source`
    apiVersion: v1
    kind: Service
    metadata:
      name: web
      namespace: prod
    spec:
      selector:
        app: web
      sessionAffinity: None
      ports:
      - name: http
        port: 80
        targetPort: 8081
        protocol: TCP
      - name: https
        port: 443
        targetPort: 8443
        protocol: TCP
  `,
  // [kpt bug] protocol added to a port of a list keyed by port and protocol.
  'pkg/metrics-service.yaml': source`
    apiVersion: v1
    kind: Service
    metadata:
      name: web-metrics
      namespace: prod
    spec:
      selector:
        app: web
      ports:
      - name: metrics
        port: 9090
        protocol: TCP
      - name: admin
        port: 9091
        protocol: TCP
  `,
  // [upstream comment change, local untouched] first key's head comment; [head comment added
  // upstream] untouched; [field deleted upstream] removed; [resource added upstream] web-extra.
  'pkg/configmap.yaml': source`
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: web-config
      namespace: prod
    data:
      # log level, upstream
      level: info # the default
      greeting: "hello, world"
      timeout: "60"
      # head comment, upstream
      untouched: "1"
      mode: v # mode-up
      # region-up
      region: eu
      feature: up
      new-key: up
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: web-extra
      namespace: prod
    data:
      k: v
  `,
  // [CRD: lists not keyed] endpoints changed; [same value, other type] sampleLimit; [map deleted
  // upstream] gone, extra.
  'pkg/monitor.yaml': source`
    apiVersion: monitoring.coreos.com/v1
    kind: ServiceMonitor
    metadata:
      name: web
      namespace: prod
    spec:
      selector:
        matchLabels:
          app: web
      endpoints:
      - port: http
        interval: 15s
      - port: metrics
        interval: 30s
      namespaceSelector:
        matchNames: [prod]
      jobLabel: app
      sampleLimit: "1"
  `,
  // [upstream moves a resource in its file] the RoleBinding goes first; the Role changes.
  'pkg/rbac.yaml': source`
    apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata:
      name: web
      namespace: prod
    roleRef:
      apiGroup: rbac.authorization.k8s.io
      kind: Role
      name: web
    subjects:
    - kind: ServiceAccount
      name: web
    ---
    apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata:
      name: web
      namespace: prod
    rules:
    - apiGroups: [""]
      resources: [configmaps, secrets]
      verbs: [get, list]
  `,
  'pkg/serviceaccount.yaml': source`
    apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: web
      namespace: prod
    imagePullSecrets:
    - name: registry
  `,
  'pkg/pdb.yaml': source`
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata:
      name: web
      namespace: prod
    spec:
      minAvailable: 2
  `,
  // [resource deleted upstream] unchanged downstream (old-secret), changed downstream (legacy).
  'pkg/legacy.yaml': undefined,
  'pkg/old-secret.yaml': undefined,
  'pkg/both.yaml': source`
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: both
      namespace: prod
    data:
      shared: up
      upstream: "yes"
  `,
  // [resource added upstream] a new file, with its head comment.
  'pkg/hpa.yaml': source`
    # Scales the web tier.
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata:
      name: web
      namespace: prod
    spec:
      scaleTargetRef:
        apiVersion: apps/v1
        kind: Deployment
        name: web
      minReplicas: 2
      maxReplicas: 10
  `,
  'pkg/sub/Kptfile': source`
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: db
    info:
      description: db v2
  `,
  'pkg/sub/statefulset.yaml': source`
    apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: db
      namespace: prod
    spec:
      replicas: 1
      serviceName: db
      template:
        spec:
          containers:
          - name: postgres
            image: postgres:16
  `,
  // [kpt bug] YAML files a .krmignore excludes: changed and added upstream.
  'pkg/raw/values.yaml': 'replicas: 2\nimage: nginx\n',
  'pkg/raw/extra.yaml': 'extra: true\n',
  // [non-KRM] README (edited downstream too), NOTES changed, CHANGELOG deleted, a new doc,
  // .gitignore changed (kpt never syncs paths with .git), values.json changed (re-encoded by
  // get --for-deployment, so the downstream's copy counts as edited), an executable changed.
  'pkg/README.md': '# Web\n\nv2 readme.\n',
  'pkg/NOTES.txt': 'notes v2\n',
  'pkg/CHANGELOG.md': undefined,
  'pkg/docs/upgrade.md': 'upgrading to v2\n',
  'pkg/.gitignore': 'tmp/\nout/\n',
  'pkg/values.json': '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json-values","namespace":"prod"},"data":{"replicas":"2"}}',
  'pkg/scripts/check.sh': { text: '#!/bin/sh\necho v2\n', executable: true },
}

/** The downstream's own edits after `kpt pkg get`. */
function editLocally(dir: string): void {
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
    ['  validators:\n', '    - image: gcr.io/kpt-fn/set-namespace:v0.4\n      configMap:\n        namespace: prod\n  validators:\n'],
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
    ['    protocol: TCP\n', '    protocol: TCP\n  - name: metrics\n    port: 9090\n    targetPort: 9090\n    protocol: TCP\n'],
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
    ['    interval: 30s\n  namespaceSelector', '    interval: 30s\n  - port: admin\n    interval: 60s\n  namespaceSelector'],
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
    'both.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: both\n  namespace: prod\ndata:\n  shared: local\n  mine: local\n',
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
const expectedConflicts = [
  ['both.yaml', 'data.shared'],
  ['configmap.yaml', 'data.feature'],
  ['configmap.yaml', 'data.removedlocal'],
  ['configmap.yaml', 'data.timeout'],
  ['deployment.yaml', 'spec.revisionHistoryLimit'],
  ['deployment.yaml', 'spec.template.spec.containers[name=nginx].env[name=MODE].value'],
  ['deployment.yaml', 'spec.template.spec.containers[name=nginx].env[name=OLD].value'],
  ['monitor.yaml', 'spec.endpoints'],
]

const serviceHead = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web-metrics', namespace: 'prod', annotations: { 'internal.kpt.dev/upstream-identifier': '|Service|prod|web-metrics' } },
}
const metricsPort = { name: 'metrics', port: 9090 }
const adminPort = { name: 'admin', port: 9091, protocol: 'TCP' }

/**
 * Where kpt is wrong and we differ on purpose: kpt's result and ours, as
 * `comparable` gives them (undefined: no such file).
 */
const knownDifferences: Record<string, { kpt: unknown; ours: unknown }> = {
  // Upstream adds `protocol: TCP` to a Service port (ports are keyed by port and protocol). kpt's
  // walk merges the key tuples (9090,"") and (9090,TCP) but then finds no element to replace, so
  // it keeps the old port and adds the new one: port 9090/TCP twice, which the API server rejects.
  // We drop the old element and append upstream's.
  'metrics-service.yaml': {
    kpt: [{ ...serviceHead, spec: { selector: { app: 'web' }, ports: [metricsPort, { ...metricsPort, protocol: 'TCP' }, adminPort] } }],
    ours: [{ ...serviceHead, spec: { selector: { app: 'web' }, ports: [adminPort, { ...metricsPort, protocol: 'TCP' }] } }],
  },
  // YAML files a .krmignore excludes: kpt's resource merge does not read them and its sync of
  // other files skips every *.yaml, so they never change after `kpt pkg get` (upstream
  // edits, additions and deletions are all lost). We sync them like other files.
  'raw/values.yaml': { kpt: [{ replicas: 1, image: 'nginx' }], ours: [{ replicas: 2, image: 'nginx' }] },
  'raw/extra.yaml': { kpt: undefined, ours: [{ extra: true }] },
}

const isYaml = (path: string) => /(^|\/)Kptfile$|\.ya?ml$/.test(path)

/** What the comparison sees of a file: YAML as values per document, anything else as bytes and mode. */
function comparable(path: string, file: PackageFile | undefined): unknown {
  if (file === undefined) return undefined
  const text = fileText(file)
  if (!isYaml(path)) return { text, executable: Boolean(file.executable) }
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`)
      return doc.toJS() as unknown
    })
    .filter((value) => value !== null && value !== undefined)
}

/**
 * The comments of a YAML file, per document in order, as their trimmed lines.
 * (Kptfiles are left out: kpt drops their comments, we keep the downstream's.)
 */
function comments(file: PackageFile): string[][] {
  return parseAllDocuments(fileText(file)).map((doc) => {
    const lines: string[] = []
    const add = (comment: string | null | undefined) => {
      if (comment)
        lines.push(
          ...comment
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean),
        )
    }
    add(doc.commentBefore)
    visit(doc, (_key, node) => {
      if (isNode(node)) {
        add(node.commentBefore)
        add(node.comment)
      }
    })
    add(doc.comment)
    return lines
  })
}

describe('updatePackage = kpt pkg update (resource-merge)', () => {
  let work: string
  let kpt: PackageFiles
  let ours: UpdateResult

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'kpt-variants-diff-update-'))
    const repo = join(work, 'upstream')
    await createRepo(repo, [['pkg/v1', v1]])
    // v2: the whole package rewritten, so files missing from v2 are deleted.
    rmSync(join(repo, 'pkg'), { recursive: true })
    writeTree(repo, Object.fromEntries(Object.entries(v2).filter((entry): entry is [string, TreeSpec[string]] => entry[1] !== undefined)))
    await git(repo, 'add', '-A')
    await git(repo, 'commit', '-q', '-m', 'pkg/v2')
    await git(repo, 'tag', 'pkg/v2')

    const url = `file://${repo}`
    const ds = join(work, 'edge')
    await execa('kpt', ['pkg', 'get', `${url}.git/pkg@v1`, ds, '--for-deployment'], { cwd: work })
    editLocally(ds)
    const local = readPackageDirectory(ds)!
    await execa('kpt', ['pkg', 'update', 'edge@v2'], { cwd: work })
    kpt = readPackageDirectory(ds)!

    const gitSource = await GitSource.open(url, work, { scratch: work })
    const tags = await gitSource.tags()
    const [c1, c2] = [tags.get('pkg/v1')!, tags.get('pkg/v2')!]
    ours = updatePackage({
      origin: gitPackageFiles(await gitSource.readDirectory(c1, 'pkg')),
      updated: gitPackageFiles(await gitSource.readDirectory(c2, 'pkg')),
      local,
      onConflict: 'upstream',
      // What kpt records: the ref as typed, and the package tag it resolved to.
      upstream: { repo: url, directory: '/pkg', ref: 'v2' },
      upstreamLock: { repo: url, directory: '/pkg', ref: 'pkg/v2', commit: c2 },
    })
  }, 60_000)
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  test('the merge succeeds and reports as conflicts the fields both sides changed', () => {
    expect(ours.errors).toEqual([])
    expect(ours.ok).toBe(true)
    expect(ours.conflicts.map((c) => [c.file, c.field]).sort()).toEqual(expectedConflicts)
    expect(ours.conflicts.every((c) => c.resolution === 'upstream')).toBe(true)
  })

  test('the same files', () => {
    const paths = (files: PackageFiles) => [...files.keys()].filter((path) => !(path in knownDifferences))
    expect(paths(ours.files)).toEqual(paths(kpt))
  })

  test('every file the same: YAML documents as values, other files byte for byte', () => {
    for (const [path, file] of kpt) {
      if (path in knownDifferences) continue
      expect({ path, value: comparable(path, ours.files.get(path)) }).toEqual({ path, value: comparable(path, file) })
    }
  })

  test('the same comments in every resource file', () => {
    for (const [path, file] of kpt) {
      if (path in knownDifferences || !/\.ya?ml$/.test(path)) continue
      expect({ path, comments: comments(ours.files.get(path)!) }).toEqual({ path, comments: comments(file) })
    }
  })

  test.each(Object.keys(knownDifferences))('known difference (kpt bug): %s', (path) => {
    const { kpt: theirs, ours: mine } = knownDifferences[path]!
    expect(comparable(path, kpt.get(path))).toEqual(theirs)
    expect(comparable(path, ours.files.get(path))).toEqual(mine)
  })
})

/**
 * The strategies a downstream Kptfile may name (`upstream.updateStrategy`),
 * against the real `kpt pkg update` with the same strategy: the same fixture,
 * the strategy written into the downstream Kptfile before updating.
 */
describe('updatePackage = kpt pkg update, with the Kptfile strategy', () => {
  let work: string
  let url: string
  let commits: { c1: string; c2: string }
  let gitSource: GitSource

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'kpt-variants-diff-strategy-'))
    const repo = join(work, 'upstream')
    await createRepo(repo, [['pkg/v1', v1]])
    rmSync(join(repo, 'pkg'), { recursive: true })
    writeTree(repo, Object.fromEntries(Object.entries(v2).filter((entry): entry is [string, TreeSpec[string]] => entry[1] !== undefined)))
    await git(repo, 'add', '-A')
    await git(repo, 'commit', '-q', '-m', 'pkg/v2')
    await git(repo, 'tag', 'pkg/v2')
    url = `file://${repo}`
    gitSource = await GitSource.open(url, work, { scratch: work })
    const tags = await gitSource.tags()
    commits = { c1: tags.get('pkg/v1')!, c2: tags.get('pkg/v2')! }
  }, 60_000)
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  /** A downstream got from pkg/v1 (edited locally or not), its Kptfile set to `strategy`, updated to v2 by kpt and by us. */
  async function updateBoth(name: string, strategy: string, options: { forDeployment: boolean; edit: boolean }) {
    const ds = join(work, name)
    await execa('kpt', ['pkg', 'get', `${url}.git/pkg@v1`, ds, ...(options.forDeployment ? ['--for-deployment'] : [])], { cwd: work })
    if (options.edit) editLocally(ds)
    const kptfilePath = join(ds, 'Kptfile')
    writeFileSync(kptfilePath, readFileSync(kptfilePath, 'utf8').replace('updateStrategy: resource-merge', `updateStrategy: ${strategy}`))
    const local = readPackageDirectory(ds)!
    // kpt's --strategy defaults to resource-merge whatever the Kptfile says, so it is given the Kptfile's.
    const run = await execa('kpt', ['pkg', 'update', `${name}@v2`, '--strategy', strategy], { cwd: work, reject: false })
    const kpt = { exitCode: run.exitCode, stderr: String(run.stderr), files: readPackageDirectory(ds)! }
    const ours = updatePackage({
      origin: gitPackageFiles(await gitSource.readDirectory(commits.c1, 'pkg')),
      updated: gitPackageFiles(await gitSource.readDirectory(commits.c2, 'pkg')),
      local,
      onConflict: 'upstream',
      upstream: { repo: url, directory: '/pkg', ref: 'v2' },
      upstreamLock: { repo: url, directory: '/pkg', ref: 'pkg/v2', commit: commits.c2 },
    })
    return { local, kpt, ours }
  }

  /** Both results hold the same files, YAML as values with the same comments, other files byte for byte. */
  function expectSamePackages(kpt: PackageFiles, ours: PackageFiles): void {
    expect([...ours.keys()]).toEqual([...kpt.keys()])
    for (const [path, file] of kpt) {
      expect({ path, value: comparable(path, ours.get(path)) }).toEqual({ path, value: comparable(path, file) })
      if (/\.ya?ml$/.test(path)) expect({ path, comments: comments(ours.get(path)!) }).toEqual({ path, comments: comments(file) })
    }
  }

  /** kpt's list of modified files (in no particular order), sorted. */
  function kptModifiedFiles(stderr: string): string[] {
    const list = /local package files have been modified: \[(.*)\]\.\n {2}use a different update --strategy\./.exec(stderr)
    if (!list) throw new Error(`kpt did not refuse the fast-forward:\n${stderr}`)
    return list[1]!.split(' ').sort()
  }

  /** Our list of modified files as kpt names them: a subpackage's files from the subpackage. */
  function asKptNames(message: string): string[] {
    const list = /^local package files have been modified: \[(.*)\]\.\n {2}use a different update --strategy\.$/.exec(message)
    if (!list) throw new Error(`not a refused fast-forward: ${message}`)
    return [...new Set(list[1]!.split(' ').map((path) => path.replace(/^sub\//, '')))].sort()
  }

  test('fast-forward over local changes: both refuse, naming the same files, and nothing changes', async () => {
    const { local, kpt, ours } = await updateBoth('ff-edited', 'fast-forward', { forDeployment: true, edit: true })
    expect(kpt.exitCode).toBe(1)
    expect(ours.ok).toBe(false)
    expect(ours.errors).toHaveLength(1)
    // kpt also names the package-context.yaml files it generated itself, which we do not count (strategies.ts).
    expect(asKptNames(ours.errors[0]!)).toEqual(kptModifiedFiles(kpt.stderr).filter((path) => path !== 'package-context.yaml'))
    // We change nothing. kpt, before it refuses, writes the new ref into the Kptfile and marks the
    // downstream's own resources with their identity: nothing else.
    expect(ours.files).toBe(local)
    expect([...kpt.files.keys()]).toEqual([...local.keys()])
    const unmarked = (path: string, file: PackageFile | undefined) =>
      JSON.stringify(comparable(path, file), (key, value: unknown) => (key === 'internal.kpt.dev/upstream-identifier' ? undefined : value))
        .replace(/,?"annotations":\{\}/g, '')
        .replace(/"ref":"v2"/, '"ref":"v1"')
    for (const [path, file] of local) expect({ path, value: unmarked(path, kpt.files.get(path)) }).toEqual({ path, value: unmarked(path, file) })
  }, 60_000)

  test('fast-forward without local changes: both take upstream', async () => {
    const { kpt, ours } = await updateBoth('ff-clean', 'fast-forward', { forDeployment: false, edit: false })
    expect({ exitCode: kpt.exitCode, errors: ours.errors }).toEqual({ exitCode: 0, errors: [] })
    expectSamePackages(kpt.files, ours.files)
  }, 60_000)

  test('fast-forward of a deployment package: kpt counts the package context it generated, we do not (a known difference)', async () => {
    const { kpt, ours } = await updateBoth('ff-deploy', 'fast-forward', { forDeployment: true, edit: false })
    expect(kpt.exitCode).toBe(1)
    // Both count values.json, which kpt re-encoded when it fetched the package.
    expect(kptModifiedFiles(kpt.stderr)).toEqual(['package-context.yaml', 'values.json'])
    expect(ours.errors.map(asKptNames)).toEqual([['values.json']])
  }, 60_000)

  test('force-delete-replace over local changes: upstream replaces them all', async () => {
    const { local, kpt, ours } = await updateBoth('replaced', 'force-delete-replace', { forDeployment: true, edit: true })
    expect({ exitCode: kpt.exitCode, errors: ours.errors }).toEqual({ exitCode: 0, errors: [] })
    // A known difference: kpt deletes the package contexts its `get --for-deployment` made (upstream has none), leaving a
    // deployment package that package-context cannot render; we write them afresh, as a clone has them.
    const contexts = ['package-context.yaml', 'sub/package-context.yaml']
    expectSamePackages(kpt.files, new Map([...ours.files].filter(([path]) => !contexts.includes(path))))
    for (const path of contexts) {
      expect(kpt.files.has(path)).toBe(false)
      const data = (file: PackageFile | undefined) => (comparable(path, file) as { data?: unknown }[])[0]?.data
      expect(data(ours.files.get(path))).toEqual(data(local.get(path)))
    }
  }, 60_000)

  test('resource-merge named in the Kptfile: the merge of the test above', async () => {
    const { kpt, ours } = await updateBoth('merged', 'resource-merge', { forDeployment: true, edit: true })
    expect({ exitCode: kpt.exitCode, errors: ours.errors }).toEqual({ exitCode: 0, errors: [] })
    expect([...ours.files.keys()].filter((path) => !(path in knownDifferences))).toEqual([...kpt.files.keys()].filter((path) => !(path in knownDifferences)))
  }, 60_000)
})
