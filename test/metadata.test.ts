/**
 * Each function's metadata.yaml, in the kpt function catalog's format: the image the build produces
 * (`image` is the name, as the catalog's are; the release's tag is the ref its links point at), the
 * sources and examples at that release's tag, examples that exist, and no contact nobody reads (the
 * catalog's `emails` is left out until the project has an address that is read).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseValue } from '../functions/krm/yaml/index.js'
import { functionTargets, imageName, imageTag, packageInfo, sourceUrl } from '../scripts/image-names.js'
import { repositoryRoot } from './support/root.js'

const root = repositoryRoot()
const { version, license } = packageInfo(root)

test.each(functionTargets.map((fn) => [fn]))(
  'functions/%s/metadata.yaml names the image, tag and sources the build and release make',
  (fn) => {
    const metadata = parseValue(readFileSync(join(root, 'functions', fn, 'metadata.yaml'), 'utf8')) as Record<
      string,
      unknown
    >
    expect(Object.keys(metadata)).toEqual([
      'image',
      'description',
      'tags',
      'sourceURL',
      'examplePackageURLs',
      'license',
    ])
    expect(metadata['image']).toBe(imageName(fn))
    expect(metadata['license']).toBe(license)
    expect(metadata['description']).toMatch(/^\w.{20,}\.$/)
    expect((metadata['tags'] as string[]).length).toBeGreaterThan(0)
    const tree = `${sourceUrl(root)}/tree/v${version}/`
    expect(metadata['sourceURL']).toBe(`${tree}functions/${fn}`)
    const examples = metadata['examplePackageURLs'] as string[]
    expect(examples.length).toBeGreaterThan(0)
    for (const url of examples) {
      expect(url.startsWith(`${tree}functions/${fn}/examples/`)).toBe(true)
      expect(existsSync(join(root, url.slice(tree.length), '.expected', 'config.yaml'))).toBe(true)
    }
    // Its README says how to run it, by the same image and tag.
    expect(readFileSync(join(root, 'functions', fn, 'README.md'), 'utf8')).toContain(imageTag(fn, version))
  },
)
