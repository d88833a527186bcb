/**
 * `npm run crds`: writes the CustomResourceDefinitions of functions/api/crds.ts
 * into deploy/crds, where the deployable package installs them from.
 */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { crdFileText, customResourceDefinitions } from '../functions/api/crds.js'

const dir = join(resolve(new URL('../..', import.meta.url).pathname), 'deploy', 'crds')
for (const { file, crd } of customResourceDefinitions) writeFileSync(join(dir, file), crdFileText(crd))
console.log(`wrote ${customResourceDefinitions.length} CRDs into deploy/crds`)
