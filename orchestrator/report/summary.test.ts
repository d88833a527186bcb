import { describeStep } from './report.js'
import type { VariantReport } from './report.js'
import { formatSummary, newerVersions } from './summary.js'

const row = (path: string, fields: Partial<VariantReport> = {}): VariantReport => ({
  subject: `PackageVariant default/${path.replace('/', '-')}`,
  path,
  status: 'unchanged',
  upstream: 'blueprints/nginx v2',
  reasons: [],
  warnings: [],
  conflicts: [],
  ...fields,
})

describe('the summary of versions followed and of dependency policies', () => {
  test('newer versions beyond a constraint: one line per set and versions; none when the newest is followed', () => {
    const beyond = { constraint: '^1', version: 'v1.1.0', newest: 'v2.0.0' }
    expect(
      newerVersions([
        row('a/nginx', { set: 'default/nginx', upstreamVersion: beyond }),
        row('b/nginx', { set: 'default/nginx', upstreamVersion: beyond }),
        row('c/web', { upstreamVersion: { constraint: '>=1', version: 'v3.0.0' } }),
        row('d/web', { status: 'failed', upstreamVersion: beyond }),
        row('e/web', { upstreamVersion: beyond }),
      ]),
    ).toEqual([
      'PackageVariantSet default/nginx (2): v2.0.0 is published; "^1" follows v1.1.0',
      'PackageVariant default/e-web: v2.0.0 is published; "^1" follows v1.1.0',
    ])
  })

  test('the UPSTREAM column names the version; overrides, kept dependencies and configure steps are said', () => {
    const text = formatSummary({
      dryRun: false,
      problems: [],
      variants: [row('a/nginx', { upstreamVersion: { constraint: '^1', version: 'v1.1.0' } })],
      dependencies: [
        {
          name: 'a',
          steps: [
            {
              action: 'configure',
              package: 'cert-manager',
              version: 'v1.14.4',
              from: 'v1.14.4',
              path: 'cert-manager',
              requiredBy: [],
              outcome: 'done',
            },
          ],
          overrides: ['pin cert-manager v1.12.0 (P spec.pins[0]) overrides nginx@v2.0.0, which asks >=1.13.0'],
          kept: [
            'old-agent v0.1.0 at old-agent (a variant of the repository failed: its package as it was may still need it)',
          ],
          packages: [],
        },
      ],
    })
    expect(text).toContain('blueprints/nginx v2 = v1.1.0')
    expect(text).toContain('  a: configure cert-manager v1.14.4 (its configuration changed)\n')
    expect(text).toContain('Pins overriding what dependants ask (DependencyPolicy):\n  a: pin cert-manager v1.12.0')
    expect(text).toContain('Dependencies not removed:\n  a: old-agent v0.1.0 at old-agent')
    expect(text).toContain('dependencies: 0 installed, 0 upgraded or downgraded, 0 removed, 1 configured')
    expect(
      describeStep('a', {
        action: 'configure',
        package: 'x',
        version: '1.0.0',
        path: 'infra/x',
        requiredBy: ['y >=1'],
        outcome: 'planned',
      }),
    ).toBe('a: configure x 1.0.0 (its configuration changed) at infra/x, required by y >=1 [planned]')
  })
})
