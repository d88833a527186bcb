/**
 * PackageVariant identifiers and names (docs/upstream-behaviour.md, "PackageVariant names";
 * `packageVariantIdentifier`, `packageVariantName`).
 */
import { createHash } from 'node:crypto'
import { dns1123SubdomainErrors } from '../krm/index.js'

/** Longest name Porch generates. */
export const packageVariantNameMaxLength = 63
/** Hex digits of the sha1 suffix on a cut name. */
export const packageVariantNameHashLength = 8

/** `<pvs>-<repo>-<pkg>`: the key that matches desired and existing PackageVariants. */
export function packageVariantIdentifier(pvsName: string, repo: string, pkg: string): string {
  return `${pvsName}-${repo}-${pkg}`
}

/**
 * The PackageVariant name for an identifier: unchanged up to 63 bytes, else
 * the first 54 bytes, `-`, and 8 hex digits of the sha1 of the whole id.
 * No lowercasing or sanitising, as in Porch (see `nameErrors`).
 */
export function packageVariantName(id: string): string {
  const bytes = Buffer.from(id, 'utf8')
  if (bytes.length <= packageVariantNameMaxLength) return id
  const hash = createHash('sha1').update(bytes).digest('hex').slice(0, packageVariantNameHashLength)
  const keep = packageVariantNameMaxLength - packageVariantNameHashLength - 1
  return `${bytes.subarray(0, keep).toString('utf8')}-${hash}`
}

/** Why a generated name is not a valid object name (DNS-1123 subdomain), or `[]`. */
export function nameErrors(name: string): string[] {
  return dns1123SubdomainErrors(name)
}
