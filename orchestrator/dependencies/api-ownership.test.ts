/** One owner per API in a repository: the later package fails with both names, unless one shares the API on purpose. */
import { packagePathAnnotation } from '../../functions/krm/index.js'
import { apiOwnershipFailures } from './api-ownership.js'
import type { OwningPackage } from './api-ownership.js'
import { crd, manifest } from './planning.fixtures.js'

function pkg(
  name: string,
  age: OwningPackage['age'],
  kinds: string[],
  shared?: { group: string; kind: string }[],
): OwningPackage {
  const root = `/out/edge-01/${name}`
  const declared = manifest(root, name, 'v1.0.0')
  if (shared) declared.set(['spec', 'sharedAPIs'], shared)
  return {
    path: `edge-01/${name}`,
    root,
    age,
    objects: [declared, ...kinds.map((kind) => crd(root, 'cert-manager.io', kind))],
  }
}

describe('apiOwnershipFailures', () => {
  test('the later of two packages defining one API fails, naming both; what the repository held first wins', () => {
    const failures = apiOwnershipFailures('edge-01', [
      pkg('my-certs', 'new', ['Certificate', 'Issuer']),
      pkg('cert-manager', 'present', ['Certificate']),
      pkg('other', 'new', ['Issuer']),
    ])
    expect([...failures.keys()]).toEqual(['edge-01/my-certs'])
    expect(failures.get('edge-01/my-certs')!.map((f) => f.code)).toEqual(['ApiOwnershipConflict'])
    expect(failures.get('edge-01/my-certs')!.map((f) => f.message)).toEqual([
      'CustomResourceDefinition certificates.cert-manager.io defines cert-manager.io/Certificate, which edge-01/cert-manager (package cert-manager, CustomResourceDefinition certificates.cert-manager.io) defines too: two packages of repository edge-01 may not own one API; if my-certs or cert-manager serves it on purpose, list {group: cert-manager.io, kind: Certificate} in spec.sharedAPIs of its PackageManifest',
    ])
    // my-certs failed, so it owns nothing: `other` keeps Issuer.
    expect(failures.has('edge-01/other')).toBe(false)
  })

  test('a variant rendered there before comes before a new one; two new ones go by path', () => {
    expect([
      ...apiOwnershipFailures('edge-01', [
        pkg('a', 'new', ['Certificate']),
        pkg('b', 'existing', ['Certificate']),
      ]).keys(),
    ]).toEqual(['edge-01/a'])
    expect([
      ...apiOwnershipFailures('edge-01', [pkg('b', 'new', ['Certificate']), pkg('a', 'new', ['Certificate'])]).keys(),
    ]).toEqual(['edge-01/b'])
  })

  test('either package listing the API in spec.sharedAPIs lifts the conflict', () => {
    const shared = [{ group: 'cert-manager.io', kind: 'Certificate' }]
    expect(
      apiOwnershipFailures('edge-01', [pkg('a', 'present', ['Certificate'], shared), pkg('b', 'new', ['Certificate'])])
        .size,
    ).toBe(0)
    expect(
      apiOwnershipFailures('edge-01', [pkg('a', 'present', ['Certificate']), pkg('b', 'new', ['Certificate'], shared)])
        .size,
    ).toBe(0)
    // Another kind of the same group is not shared.
    expect(
      apiOwnershipFailures('edge-01', [pkg('a', 'present', ['Issuer']), pkg('b', 'new', ['Issuer'], shared)]).size,
    ).toBe(1)
  })

  test('a package without a manifest is named by its path; packages the repository held before are never failed', () => {
    const bare: OwningPackage = {
      path: 'edge-01/bare',
      root: '/out/edge-01/bare',
      age: 'new',
      objects: [crd('/out/edge-01/bare', 'cert-manager.io', 'Certificate')],
    }
    expect(
      apiOwnershipFailures('edge-01', [pkg('cm', 'present', ['Certificate']), bare]).get('edge-01/bare')![0]!.message,
    ).toContain('if bare or cm serves it')
    expect(
      apiOwnershipFailures('edge-01', [pkg('a', 'present', ['Certificate']), pkg('b', 'present', ['Certificate'])])
        .size,
    ).toBe(0)
  })

  test('a CRD of a subpackage counts for its package', () => {
    const sub = crd('/out/edge-01/b/crds', 'cert-manager.io', 'Certificate')
    const b: OwningPackage = { path: 'edge-01/b', root: '/out/edge-01/b', age: 'new', objects: [sub] }
    expect(apiOwnershipFailures('edge-01', [pkg('a', 'present', ['Certificate']), b]).size).toBe(1)
    expect(sub.getAnnotation(packagePathAnnotation)).toBe('/out/edge-01/b/crds')
  })
})
