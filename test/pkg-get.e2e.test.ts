/**
 * The foundation's acceptance scenario, through the real kpt: a blueprint is
 * fetched with `kpt pkg get --for-deployment`, `bin/package-context` is added to
 * its Kptfile pipeline, and `kpt fn render --allow-exec` sets the configured keys
 * while every other byte of every file stays as it was, run after run.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { gitIdentity, repoRoot } from './e2e/runner.js'
import { readTree } from './support/files.js'

const blueprint: Record<string, string> = {
  Kptfile:
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: blueprint\n  annotations:\n    config.kubernetes.io/local-config: "true"\ninfo:\n  description: nginx blueprint\n',
  'deployment.yaml': `# The web tier.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # the name
  namespace: default
spec:
  replicas: 3
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
        image: "nginx:1.25" # pinned
        args: ["--port", "8080"]
        env:
        - name: MODE
          value: 'on'
`,
  'service.yaml':
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  ports:\n  - port: 80\n    targetPort: 8080\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: default\ndata:\n  config.json: |\n    {"a": 1}\n',
  'sub/Kptfile':
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n  annotations:\n    config.kubernetes.io/local-config: "true"\n',
  'sub/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub-cm\ndata:\n  key: value\n',
}

describe('kpt pkg get --for-deployment, then kpt fn render with bin/package-context', () => {
  let work: string
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'kpt-variants-pkg-get-'))
  })
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  test('sets the configured keys and changes no other byte, run after run', async () => {
    const upstream = join(work, 'upstream')
    for (const [path, text] of Object.entries(blueprint)) {
      mkdirSync(join(upstream, 'blueprint', path, '..'), { recursive: true })
      writeFileSync(join(upstream, 'blueprint', path), text)
    }
    const git = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env: gitIdentity })
    await git(upstream, 'init', '-q', '-b', 'main')
    await git(upstream, 'add', '-A')
    await git(upstream, 'commit', '-q', '-m', 'blueprint')
    await execa('git', ['clone', '-q', '--bare', upstream, join(work, 'upstream.git')])

    const deploy = join(work, 'edge-web')
    await execa('kpt', ['pkg', 'get', `file://${work}/upstream.git/blueprint@main`, deploy, '--for-deployment'], {
      cwd: work,
    })
    const kptfilePath = join(deploy, 'Kptfile')
    writeFileSync(
      kptfilePath,
      `${readFileSync(kptfilePath, 'utf8')}pipeline:\n  mutators:\n  - exec: ${join(repoRoot, 'bin', 'package-context')}\n    configMap:\n      region: us-east1\n      enabled: "yes"\n`,
    )
    const before = readTree(deploy)
    expect(before.get('package-context.yaml')).toContain('  name: edge-web\n')
    expect(before.get('sub/package-context.yaml')).toBeDefined()

    const runs: Map<string, string>[] = []
    for (let i = 0; i < 2; i++) {
      const render = await execa('kpt', ['fn', 'render', deploy, '--allow-exec'], { cwd: work, reject: false })
      expect(render.exitCode).toBe(0)
      runs.push(readTree(deploy))
    }
    const [first, second] = runs as [Map<string, string>, Map<string, string>]
    expect([...second]).toEqual([...first])
    expect([...first.keys()]).toEqual([...before.keys()])
    for (const [path, text] of before) {
      if (path === 'package-context.yaml') continue
      expect({ path, text: first.get(path) }).toEqual({ path, text })
    }
    expect(first.get('package-context.yaml')).toBe(
      `${before.get('package-context.yaml')}  enabled: "yes"\n  region: us-east1\n`,
    )
  }, 120_000)
})
