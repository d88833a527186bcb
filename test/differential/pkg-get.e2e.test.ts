/**
 * Differential test: a new downstream made by the orchestrator's clone is,
 * file for file and byte for byte, what `kpt pkg get --for-deployment` writes
 * from the same upstream revision.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { clonePackage, kptRepoUrl, prepareRevision } from '../../orchestrator/clone/clone.js'
import { GitSource } from '../../orchestrator/upstream/git-source.js'
import { fileText } from '../../orchestrator/package/files.js'
import { createRepo, readTreeWithModes } from '../support/git-repo.js'
import type { TreeSpec } from '../support/git-repo.js'
import { source } from '../support/source.js'

const blueprint: TreeSpec = {
  'blueprint/Kptfile': source`
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: blueprint
      labels:
        tier: web
      annotations:
        config.kubernetes.io/local-config: "true"
    info:
      description: nginx blueprint # the description
      keywords: [web, "on"]
    pipeline:
      mutators:
      - image: gcr.io/kpt-fn/set-labels:v0.2.0
        configMap:
          b: "2"
          a: "yes"
      validators:
      - exec: dependency-check
  `,
  'blueprint/deployment.yaml': source`
    # The web tier.
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web # the name
      namespace: default
    spec:
      replicas: 3
      template:
        spec:
          containers:
          - name: nginx
            image: "nginx:1.25" # pinned
            args: ["--port", "8080"]
  `,
  'blueprint/wide.yaml': source`
    apiVersion: v1
    kind: Service
    metadata:
      name: web
      labels: {app: web}
    spec:
      ports:
        - port: 80
          targetPort: 8080
  `,
  'blueprint/multi.yaml': source`
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: a
      annotations:
        internal.kpt.dev/upstream-identifier: stale
        keep: me
    data:
      k: v
    ---
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata:
      name: reader
    rules: []
  `,
  'blueprint/package-context.yaml': source`
    # upstream context, erased by kpt
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: kptfile.kpt.dev
      annotations:
        config.kubernetes.io/local-config: "true"
    data:
      name: example
      region: us
  `,
  'blueprint/README.md': '# nginx\n\nA blueprint.\n',
  'blueprint/.krmignore': 'cluster/\n',
  'blueprint/cluster/region.yaml': 'not: krm\n',
  'blueprint/scripts/check.sh': { text: '#!/bin/sh\necho ok\n', executable: true },
  'blueprint/link.md': { link: 'README.md' },
  'blueprint/resource.json': '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json-cm"},"data":{"a":"<b>"}}',
  'blueprint/sub/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub-name\n',
  'blueprint/sub/cm.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub-cm\n  namespace: team\ndata:\n  key: value\n',
  'blueprint/sub/nested/deeper.yml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n',
  'other/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: other\n',
}

describe('clone = kpt pkg get --for-deployment', () => {
  let work: string
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'kpt-variants-diff-get-'))
  })
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  test.each([
    ['a non-bare repository by file:// URL', 'nonbare', (dir: string) => `file://${dir}.git`],
    ['a bare repository by path', 'bare', (dir: string) => `${dir}.git`],
  ])(
    '%s: same files, same bytes, same modes',
    async (_, name, urlOf) => {
      const repo = join(work, name)
      await createRepo(repo, [['blueprint/v1', blueprint]])
      if (name === 'bare') {
        await execa('git', ['clone', '-q', '--bare', repo, `${repo}.git`])
        rmSync(repo, { recursive: true, force: true })
      }
      const url = urlOf(repo)
      const dest = join(work, `${name}-out`, 'edge-web')
      await execa('mkdir', ['-p', join(work, `${name}-out`)])
      await execa('kpt', ['pkg', 'get', `${url}/blueprint@blueprint/v1`, dest, '--for-deployment'], { cwd: work })
      const expected = readTreeWithModes(dest)

      const gitSource = await GitSource.open(url, work, { scratch: work })
      const commit = (await gitSource.tags()).get('blueprint/v1')!
      const files = await gitSource.readDirectory(commit, 'blueprint')
      const prepared = prepareRevision(
        { repo: kptRepoUrl(url), directory: 'blueprint', ref: 'blueprint/v1', commit },
        files,
      )
      if (!prepared.ok) throw new Error(prepared.message)
      expect(prepared.revision.warnings).toEqual(['Ignoring symlink "link.md"'])
      const clone = clonePackage(prepared.revision, 'edge-web')
      const actual = new Map([...clone].map(([path, file]) => [path, fileText(file) + (file.executable ? '\n+x' : '')]))
      expect([...actual.keys()]).toEqual([...expected.keys()])
      for (const [path, text] of expected) expect({ path, text: actual.get(path) }).toEqual({ path, text })
    },
    60_000,
  )
})
