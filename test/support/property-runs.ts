/**
 * How many inputs a property test tries. The gate (`npm test`, `npm run test:unit`, CI) tries the
 * number a test names, on the fixed seed of property-seed.ts: enough to catch a change that breaks
 * the property, small enough that the unit suite stays under a minute. `npm run fuzz`
 * (`PROPERTY_SEED=random`) is where new inputs are explored, and tries `fuzzFactor` times as many on
 * a new seed each run. A replayed seed (a failure once found) names its own count and does not
 * scale: it must reach the input it found.
 */
export const fuzzFactor = 10

export function propertyRuns(gate: number): number {
  return process.env['PROPERTY_SEED'] === 'random' ? gate * fuzzFactor : gate
}
