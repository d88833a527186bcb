/**
 * Hostile inputs for every bin/ program: what a careless or malicious package
 * author, platform team or PackageVariant author could feed a function. Each
 * case is a whole stdin; `expect` says what the run must give:
 * - `error`: exit 1 and an error result matching `message`;
 * - `any`: exit 0 or 1 (some functions never read the bad part), as long as
 *   the run meets the invariants every run must meet (see hostile.test.ts).
 */
import { dependencyCases } from './corpus/dependencies.js'
import { fanOutCases } from './corpus/fan-out.js'
import { fieldTypeCases } from './corpus/field-types.js'
import { sizeCases } from './corpus/size.js'
import type { HostileCase } from './corpus/build.js'
import { wholeInputCases } from './corpus/whole-input.js'
import { yamlSyntaxCases } from './corpus/yaml-syntax.js'

export type { HostileCase } from './corpus/build.js'
export { validConfig } from './corpus/build.js'

/** Every case, by category. */
export const corpus: HostileCase[] = [
  ...yamlSyntaxCases,
  ...fieldTypeCases,
  ...wholeInputCases,
  ...sizeCases,
  ...fanOutCases,
  ...dependencyCases,
]
