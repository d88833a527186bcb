/** Revision 2 of the upstream package of the pkg-update differential test (tag pkg/v2), and the repository of both. */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { createRepo, git, writeTree } from '../../support/git-repo.js'
import type { TreeSpec } from '../../support/git-repo.js'
import { source } from '../../support/source.js'
import { v1 } from './upstream-v1.js'

/** v2 over v1; `undefined` deletes a file. */
export const v2: Record<string, TreeSpec[string] | undefined> = {
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
  'pkg/values.json':
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json-values","namespace":"prod"},"data":{"replicas":"2"}}',
  'pkg/scripts/check.sh': { text: '#!/bin/sh\necho v2\n', executable: true },
}

/** A git repository at `repo` with tags pkg/v1 and pkg/v2 (the whole package rewritten, so files missing from v2 are deleted). */
export async function createUpstream(repo: string): Promise<void> {
  await createRepo(repo, [['pkg/v1', v1]])
  rmSync(join(repo, 'pkg'), { recursive: true })
  writeTree(
    repo,
    Object.fromEntries(
      Object.entries(v2).filter((entry): entry is [string, TreeSpec[string]] => entry[1] !== undefined),
    ),
  )
  await git(repo, 'add', '-A')
  await git(repo, 'commit', '-q', '-m', 'pkg/v2')
  await git(repo, 'tag', 'pkg/v2')
}
