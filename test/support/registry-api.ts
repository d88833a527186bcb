/** Reads a registry on loopback over the OCI distribution API: what was pushed there, as a client sees it. */

const manifestTypes = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ')

/** The tags of repository `name` (`kpt-variants/fan-out`) in the registry at `host`. */
export async function registryTags(host: string, name: string): Promise<string[]> {
  const response = await fetch(`http://${host}/v2/${name}/tags/list`)
  if (!response.ok) throw new Error(`GET tags of ${name}: ${response.status}`)
  return ((await response.json()) as { tags: string[] | null }).tags ?? []
}

/** The digest and the labels of image `name:reference` as the registry serves them (its manifest, then its config). */
export async function registryImage(
  host: string,
  name: string,
  reference: string,
): Promise<{ digest: string; labels: Record<string, string> }> {
  const manifest = await fetch(`http://${host}/v2/${name}/manifests/${reference}`, {
    headers: { Accept: manifestTypes },
  })
  if (!manifest.ok) throw new Error(`GET manifest ${name}:${reference}: ${manifest.status}`)
  const digest = manifest.headers.get('docker-content-digest') ?? ''
  const { config } = (await manifest.json()) as { config: { digest: string } }
  const blob = await fetch(`http://${host}/v2/${name}/blobs/${config.digest}`)
  if (!blob.ok) throw new Error(`GET config of ${name}:${reference}: ${blob.status}`)
  const image = (await blob.json()) as { config?: { Labels?: Record<string, string> } }
  return { digest, labels: image.config?.Labels ?? {} }
}
