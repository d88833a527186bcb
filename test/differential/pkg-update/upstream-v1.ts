/** Revision 1 of the upstream package of the pkg-update differential test (tag pkg/v1). */
import type { TreeSpec } from '../../support/git-repo.js'
import { source } from '../../support/source.js'

export const v1: TreeSpec = {
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
  'pkg/values.json':
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json-values","namespace":"prod"},"data":{"replicas":"1"}}',
  'pkg/scripts/check.sh': { text: '#!/bin/sh\necho v1\n', executable: true },
}
