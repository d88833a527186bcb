/**
 * The fleet page as one self-contained HTML file: the model embedded once as
 * JSON, the diffs as gzip-compressed chunks beside it (a fleet's diffs repeat
 * from variant to variant, so 10,000 of them compress ~40 times; a chunk is
 * decompressed in the browser only when one of its variants is opened), and
 * the page's script and styles inlined (bundled by scripts/bundle.ts into
 * dist/bundles/fleet-page.{js,css}). No server, no network, no other file.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { writeFileAtomic } from '../cache/atomic-write.js'
import type { PageModel } from './types.js'

/** Diffs per compressed chunk: large enough to compress well, small enough to open one variant at once. */
export const diffChunkSize = 64

export interface PageAssets {
  script: string
  css: string
}

/** The page for `model`. */
export function fleetPageHtml(model: PageModel, assets: PageAssets): string {
  const diffs: string[] = []
  const variants = model.variants.map(({ diff, ...v }) =>
    diff === undefined ? v : { ...v, diffRef: diffs.push(diff) - 1 },
  )
  const chunks: string[] = []
  for (let i = 0; i < diffs.length; i += diffChunkSize)
    chunks.push(gzipSync(JSON.stringify(diffs.slice(i, i + diffChunkSize)), { level: 9 }).toString('base64'))
  const title = escapeHtml(model.title)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${title}</title>
<style>${assets.css.replace(/<\/style/gi, '<\\/style')}</style>
</head>
<body>
<header>
<h1>${title}</h1>
<div id="counts" role="group" aria-label="states"></div>
<div class="filters">
<input id="search" type="search" placeholder="search packages, variants, labels…" aria-label="search">
<input id="repo" type="search" placeholder="repository (prefix*)" aria-label="repository">
<select id="label" aria-label="label"><option value="">any label</option></select>
<select id="failure" aria-label="failure code"><option value="">any failure</option></select>
<select id="columns" aria-label="columns"><option value="package">columns: packages</option><option value="set">columns: PackageVariantSets</option></select>
<span id="shown"></span>
</div>
<ul id="problems"></ul>
</header>
<main>
<div id="matrix" role="grid"><div id="matrix-head" class="row head"></div><div id="matrix-body"></div></div>
<aside id="detail" hidden></aside>
</main>
<script id="fleet-model" type="application/json">${scriptJson({ ...model, variants })}</script>
<script id="fleet-diffs" type="application/json">${scriptJson({ chunkSize: diffChunkSize, chunks })}</script>
<script>${assets.script.replace(/<\/script/gi, '<\\/script')}</script>
</body>
</html>
`
}

/** JSON that cannot end its <script> element early (`</script>`, `<!--`). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c')
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** The page's script and styles, as `npm run build` bundles them (dist/bundles/fleet-page.js and .css, found above this module). */
export function pageAssets(): PageAssets {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    for (const bundles of [join(dir, 'bundles'), join(dir, 'dist', 'bundles')]) {
      if (existsSync(join(bundles, 'fleet-page.js')))
        return {
          script: readFileSync(join(bundles, 'fleet-page.js'), 'utf8'),
          css: readFileSync(join(bundles, 'fleet-page.css'), 'utf8'),
        }
    }
  }
  throw new Error('the fleet page’s script is missing (dist/bundles/fleet-page.js): run npm run build')
}

/** Writes the page to `file` atomically (a temporary file beside it, renamed). */
export function writeFleetPage(file: string, model: PageModel): void {
  writeFileAtomic(file, fleetPageHtml(model, pageAssets()))
}
