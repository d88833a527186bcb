import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { buildFleet } from '../fleet/fleet.js'
import type { Output, Staging } from '../output/output.js'
import { textFile } from '../package/files.js'
import type { PackageFiles } from '../package/files.js'
import { planFleet } from '../plan/plan.js'
import { packageRevisionObject } from '../upstream/revisions.js'
import type { GitSources } from '../upstream/upstreams.js'
import { nginxRevision, repositories } from '../../test/support/unit-fleet.js'
import { failUnstaged } from './render-share.js'
import type { Pending } from './render-variant.js'
import { VariantContext } from './render-variant.js'
import type { RenderSettings } from './settings.js'

const fleetFiles = [
  repositories('edge-01'),
  source`
    apiVersion: config.porch.kpt.dev/v1alpha1
    kind: PackageVariant
    metadata: {name: nginx, namespace: default}
    spec: {upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: nginx}}
  `,
]
const revision = nginxRevision(1)
const kptfile = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: nginx}\n'

/** Renders the fleet's one variant (a dry run) from `upstream`, into a downstream holding `published`. */
async function renderOne(
  upstream: () => Promise<Map<string, { mode: string; content: Buffer }>>,
  published?: PackageFiles,
) {
  const objects = fleetFiles.flatMap((text, i) => parseObjects(text, `f${i}.yaml`))
  const fleet = buildFleet({ root: '/fleet', objects, problems: [], digest: '' })
  const plan = planFleet(fleet, {
    revisions: new Map([['default|blueprints|nginx', [revision]]]),
    objects: [packageRevisionObject(revision)],
    problems: new Map(),
  })
  const sources = { readPackage: upstream } as unknown as GitSources
  const output = {
    drafts: false,
    read: () => Promise.resolve(published ? { published } : {}),
    packageDir: (path: string) => `/out/${path}`,
  } as unknown as Output
  const settings = { dryRun: true, allowExec: false, imageFunctions: 'run', onConflict: 'fail', cwd: '/', env: {} }
  const context = new VariantContext(fleet, sources, settings as unknown as RenderSettings, output, '/tmp/scratch')
  return (await context.render(plan.variants[0]!)).report
}

const file = (text: string) => ({ mode: '100644', content: Buffer.from(text) })

describe('the failure codes of a render', () => {
  test('an upstream package that is not KRM: InvalidUpstreamPackage', async () => {
    const report = await renderOne(() =>
      Promise.resolve(
        new Map([
          ['Kptfile', file(kptfile)],
          ['a.yaml', file('{')],
        ]),
      ),
    )
    expect(report.status).toBe('failed')
    expect(report.reasons.map((r) => r.code)).toEqual(['InvalidUpstreamPackage'])
  })

  test('a downstream package no PackageVariant owns (adoptNone): DownstreamNotOwned', async () => {
    const report = await renderOne(
      () => Promise.resolve(new Map([['Kptfile', file(kptfile)]])),
      new Map([['Kptfile', textFile(kptfile)]]),
    )
    expect(report.reasons).toEqual([
      {
        code: 'DownstreamNotOwned',
        message: expect.stringContaining('not owned by any PackageVariant; adoptionPolicy adoptNone leaves it alone'),
      },
    ])
  })

  test('an unexpected exception: InternalError, its stack apart from the message', async () => {
    const report = await renderOne(() => Promise.reject(new Error('boom')))
    expect(report.reasons).toEqual([
      { code: 'InternalError', message: 'internal error: boom', stack: expect.any(String) },
    ])
    expect(report.reasons[0]!.message).not.toMatch(/\n\s+at /)
    expect(report.reasons[0]!.stack).toMatch(/\n\s+at /)
  })

  test('a package that could not be written: WriteFailed', async () => {
    const staged = { dir: '/out/.staged-1' }
    // A directory output's staging (see Staging), whose background write failed.
    const output = {
      prepare: () => undefined,
      stage: () => Promise.resolve(staged),
      settle: () => Promise.resolve(new Map([['/out/.staged-1', 'ENOSPC: no space left on device']])),
      discard: () => undefined,
    } as unknown as Output & Staging
    const pending = {
      path: 'edge-01/nginx',
      order: 0,
      dependencies: [],
      staged,
      report: { subject: 'PackageVariant default/nginx', status: 'created', reasons: [], warnings: [], conflicts: [] },
    } as unknown as Pending
    await failUnstaged(output, [pending])
    expect(pending.report).toMatchObject({
      status: 'failed',
      reasons: [{ code: 'WriteFailed', message: 'cannot write the package: ENOSPC: no space left on device' }],
    })
  })
})
