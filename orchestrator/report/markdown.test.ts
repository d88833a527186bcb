import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { commentLimit, diffStat, formatMarkdown } from './markdown.js'
import type { RunReport, VariantReport } from './report.js'

/** GitHub-flavoured Markdown to HTML, as GitHub renders a comment (raw HTML such as <details> kept). */
function gfmToHtml(markdown: string): string {
  return micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] })
}

function variant(path: string, fields: Partial<VariantReport> = {}): VariantReport {
  return {
    subject: `PackageVariant default/${path.replace('/', '-')}`,
    path,
    status: 'updated',
    upstream: 'blueprints/nginx v2',
    previousUpstream: 'nginx/v1',
    reasons: [],
    warnings: [],
    conflicts: [],
    ...fields,
  }
}

function diffOf(path: string, lines: number): string {
  const body = Array.from({ length: lines }, (_, i) => `-  key${i}: old\n+  key${i}: new`).join('\n')
  return `--- a/${path}/deployment.yaml\n+++ b/${path}/deployment.yaml\n@@ -1,${lines} +1,${lines} @@\n${body}\n`
}

const report = (variants: VariantReport[], extra: Partial<RunReport> = {}): RunReport => ({
  dryRun: true,
  variants,
  problems: [],
  ...extra,
})

describe('formatMarkdown', () => {
  it('renders counts, a table of the changes and each diff in a collapsible block, as GitHub does', () => {
    const md = formatMarkdown(
      report([
        variant('edge-01/nginx', { diff: diffOf('edge-01/nginx', 2) }),
        variant('edge-02/nginx', { status: 'created', previousUpstream: undefined, diff: diffOf('edge-02/nginx', 1) }),
        variant('edge-03/nginx', { status: 'unchanged' }),
      ]),
    )
    const html = gfmToHtml(md)
    expect(html).toContain('<strong>1</strong> created')
    expect(html).toContain('<strong>1</strong> updated')
    expect(html).toContain('<strong>1</strong> unchanged')
    // A table with a header and one row per change (the unchanged variant is only counted).
    const table = /<table>[\s\S]*?<\/table>/.exec(html)?.[0] ?? ''
    expect(table.match(/<th[ >]/g)).toHaveLength(5)
    expect(table.match(/<tr>/g)).toHaveLength(3)
    expect(table).toContain('<td><code>edge-01/nginx</code></td>')
    expect(table).toContain('blueprints/nginx v2 (from nginx/v1)')
    expect(table).not.toContain('edge-03')
    // Each diff in a <details> block whose body is a diff code block (not Markdown read as text).
    const blocks = [
      ...html.matchAll(
        /<details>\n<summary>([\s\S]*?)<\/summary>\n<pre><code class="language-diff">([\s\S]*?)<\/code><\/pre>\n<\/details>/g,
      ),
    ]
    expect(blocks.map((b) => b[1])).toEqual([
      '<code>edge-02/nginx</code> created: 1 file(s), +1 −1',
      '<code>edge-01/nginx</code> updated: 1 file(s), +2 −2',
    ])
    expect(blocks[1]![2]).toContain('-  key1: old\n+  key1: new\n')
  })

  it('keeps text that looks like Markdown or HTML inside its table cell and code block', () => {
    const hostile = '```\n</details>\n<script>alert(1)</script>\n| not | a | row |\n'
    const md = formatMarkdown(
      report([
        variant('edge-01/nginx', {
          status: 'failed',
          reasons: [{ code: 'FunctionFailed', message: 'function `x` said <b>no</b> | *really*' }],
          diff: `--- a/edge-01/nginx/a.yaml\n+++ b/edge-01/nginx/a.yaml\n@@ -1 +1,4 @@\n+${hostile}`,
        }),
      ]),
    )
    const html = gfmToHtml(md)
    expect(html).not.toContain('<script>')
    expect(html).not.toContain('<b>no</b>')
    expect(html).toContain('function `x` said &lt;b&gt;no&lt;/b&gt; | *really*')
    // The diff's own ``` and </details> are code: the block still closes where it should.
    const block = /<pre><code class="language-diff">([\s\S]*?)<\/code><\/pre>\n<\/details>/.exec(html)
    expect(block?.[1]).toContain('+```\n&lt;/details&gt;\n&lt;script&gt;')
    expect(html.match(/<table>/g)).toHaveLength(1)
  })

  it('lists conflicts, failures and fleet problems', () => {
    const conflict = {
      file: 'deployment.yaml',
      resource: 'Deployment web/nginx',
      field: 'spec.replicas',
      local: '5',
      upstream: '3',
      origin: '2',
      resolution: 'upstream' as const,
    }
    const html = gfmToHtml(
      formatMarkdown(
        report(
          [
            variant('edge-01/nginx', { conflicts: [conflict] }),
            variant('edge-02/nginx', {
              status: 'failed',
              reasons: [{ code: 'UpstreamNotFound', message: 'upstream revision 9 not found' }],
            }),
          ],
          {
            problems: ['clusters.yaml: not YAML'],
          },
        ),
      ),
    )
    expect(html).toContain(
      '<code>spec.replicas</code>: downstream <code>5</code>, upstream <code>3</code> (was <code>2</code>): took upstream',
    )
    expect(html).toContain(
      '<li><code>edge-02/nginx</code>: <code>UpstreamNotFound</code> upstream revision 9 not found</li>',
    )
    expect(html).toContain('<li>clusters.yaml: not YAML</li>')
    expect(html).toMatch(/<h3>❌ kpt-variants render --dry-run<\/h3>/)
  })

  it('stays within one comment: smallest diffs first, the rest named in a note', () => {
    const variants = Array.from({ length: 40 }, (_, i) => {
      const path = `edge-${String(i).padStart(2, '0')}/nginx`
      return variant(path, { diff: diffOf(path, 20 + i * 10) })
    })
    const md = formatMarkdown(report(variants))
    expect(md.length).toBeLessThanOrEqual(commentLimit)
    const html = gfmToHtml(md)
    const shown = [...html.matchAll(/<summary><code>(edge-\d+)\/nginx<\/code>/g)].map((m) => m[1])
    // Smallest first: a prefix of the variants, the last of them possibly cut short.
    expect(shown).toEqual(variants.slice(0, shown.length).map((v) => v.path!.slice(0, 7)))
    expect(shown.length).toBeGreaterThan(5)
    expect(shown.length).toBeLessThan(40)
    expect(html).toMatch(/To stay within a 65,536-character comment, .*diff\(s\) are left out \(edge-\d+\/nginx/)
    // Every table row is there even when diffs are not.
    expect((/<table>[\s\S]*?<\/table>/.exec(html)?.[0] ?? '').match(/<tr>/g)).toHaveLength(41)
    // Every code block is closed: as many opened as closed, each inside its <details>.
    expect(html.match(/<details>/g)?.length).toBe(html.match(/<\/details>/g)?.length)
  })

  it('cuts one diff larger than a comment at a line, saying so', () => {
    const path = 'edge-01/nginx'
    const md = formatMarkdown(report([variant(path, { diff: diffOf(path, 5000) })]))
    expect(md.length).toBeLessThanOrEqual(commentLimit)
    const html = gfmToHtml(md)
    expect(html).toContain('(cut short)</summary>')
    expect(html).toContain(`the diff of ${path} is cut short`)
    expect(/<code class="language-diff">([\s\S]*?)<\/code>/.exec(html)?.[1]).toMatch(/key\d+: (old|new)\n$/)
  })

  it('says so when nothing changes', () => {
    const md = formatMarkdown(report([variant('edge-01/nginx', { status: 'unchanged' })]))
    expect(md).not.toContain('<table>')
    expect(gfmToHtml(md)).toContain(
      '1 variant(s): <strong>0</strong> created, <strong>0</strong> updated, <strong>1</strong> unchanged, <strong>0</strong> failed',
    )
  })
})

describe('diffStat', () => {
  it('counts files and lines, not the file headers', () => {
    expect(diffStat(`${diffOf('a/b', 3)}--- /dev/null\n+++ b/a/b/new.yaml\n@@ -0,0 +1 @@\n+x: 1\n`)).toEqual({
      files: 2,
      added: 4,
      removed: 3,
    })
  })
})
