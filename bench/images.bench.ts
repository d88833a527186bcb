/**
 * What an image costs against `exec:`: each function on the same 50-resource
 * package, run as kpt runs an `image:` function (`<engine> run --rm -i
 * --network none --user nobody`), against its bin/ program run as a process,
 * as `exec:` runs it. Needs a container engine and `npm run images`; without
 * them the cases are left out, saying why.
 */
import { join, resolve } from 'node:path'
import type { Benchmark } from './harness.js'
import { functionCases, resources, sourcesFile, spawnOrThrow } from './functions.bench.js'
import { hasImage, imageTag, installedEngine, packageVersion } from '../scripts/image-names.js'

const root = resolve(new URL('../..', import.meta.url).pathname)
const version = packageVersion(root)
const engine = installedEngine()
const missing = engine
  ? functionCases.map(({ fn }) => imageTag(fn.name, version)).filter((tag) => !hasImage(engine, tag))
  : []

if (!engine) console.error('images: no container engine (podman or docker): the image cases are left out')
else if (missing.length > 0)
  console.error(`images: ${missing.join(', ')} not built (npm run images): the image cases are left out`)

export const benchmarks: Benchmark[] =
  !engine || missing.length > 0
    ? []
    : functionCases.map(({ fn, input, sources }): Benchmark => {
        const args = sources ? ['--sources', sourcesFile] : []
        const mount = sources ? ['--volume', `${sourcesFile}:${sourcesFile}:ro`] : []
        return {
          name: `image ${imageTag(fn.name, version)}, ${resources} resources`,
          iterations: 10,
          run: () =>
            spawnOrThrow(
              engine,
              [
                'run',
                '--rm',
                '-i',
                '--network',
                'none',
                '--user',
                'nobody',
                ...mount,
                imageTag(fn.name, version),
                ...args,
              ],
              input,
            ),
          baseline: {
            name: `bin/${fn.name} as a process (exec:)`,
            run: () => spawnOrThrow(join(root, 'bin', fn.name), args, input),
          },
        }
      })
