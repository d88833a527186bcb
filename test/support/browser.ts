/**
 * Debian's Chromium for the browser tests, driven by playwright-core (which
 * never downloads a browser of its own). `.ci/run` installs it: in CI a
 * missing Chromium fails the tests; elsewhere they are skipped, saying so.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import type { BrowserContext } from 'playwright-core'
import { testIfAvailable } from './requires.js'

export const chromiumPath = process.env['KPT_VARIANTS_CHROMIUM'] || '/usr/bin/chromium'

/** `test` for a browser test (test/support/requires.ts: skipped, loudly, or failing under CI). */
export function testWithChromium(): jest.It {
  return testIfAvailable(
    existsSync(chromiumPath),
    `the browser tests need Chromium at ${chromiumPath} (apt-get install chromium, or set KPT_VARIANTS_CHROMIUM)`,
  )
}

/** A headless Chromium with a new, empty profile, nothing reached over the network; `close` removes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'kpt-variants-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    viewport: { width: 1400, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
