/**
 * `spec.upstream.revision` as older Porch wrote it. Nephio's first releases
 * and many guides use a string revision (`v1`, `r2`, `v4.0.0`, `main`) and a
 * `tag` field, where today's API has an integer `revision` and a
 * `workspaceName`. Both are read into today's fields, with a warning that
 * names the current form, so existing manifests work unchanged:
 *
 *   `N`, `vN`          revision N (the tag `<package>/vN`)
 *   any other string   the revision of that name: the tag `<package>/<name>`,
 *                      else the head of the branch of that name (Porch's
 *                      placeholder revision), as `workspaceName`
 */
import { formatFieldPath } from '../krm/index.js'
import type { FieldPath } from '../krm/index.js'
import type { Decoder, FieldError } from './decode.js'

/** The upstream revision fields, in today's form. */
export interface UpstreamRevision {
  revision?: number
  workspaceName?: string
}

/** Reads `revision`, `workspaceName` and the older `tag` below `base`; the older forms add a warning each. */
export function readUpstreamRevision(d: Decoder, base: FieldPath, warnings: FieldError[]): UpstreamRevision {
  const out: UpstreamRevision = {}
  const workspaceName = d.string([...base, 'workspaceName'])
  if (workspaceName !== undefined) out.workspaceName = workspaceName
  const raw = d.object.get([...base, 'revision'])
  if (typeof raw === 'string') legacy('revision', raw)
  else if (raw !== undefined && raw !== null) {
    const revision = d.integer([...base, 'revision'])
    if (revision !== undefined) out.revision = revision
  }
  const tag = d.string([...base, 'tag'])
  if (tag !== undefined && tag !== '') legacy('tag', tag)
  return out

  function legacy(field: 'revision' | 'tag', value: string): void {
    const path = formatFieldPath([...base, field])
    const numbered = /^v?(\d+)$/.exec(value)
    if (numbered && Number(numbered[1]) > 0) {
      if (out.revision === undefined) out.revision = Number(numbered[1])
      warnings.push({
        field: path,
        message: `\`${path}: ${JSON.stringify(value)}\` is older Porch's string form: read as revision ${Number(numbered[1])}; write \`revision: ${Number(numbered[1])}\``,
      })
      return
    }
    if (value === '') return
    if (out.workspaceName === undefined) out.workspaceName = value
    else if (out.workspaceName !== value) {
      d.fail(
        [...base, field],
        `${JSON.stringify(value)} names another revision than \`workspaceName: ${out.workspaceName}\``,
      )
      return
    }
    warnings.push({
      field: path,
      message: `\`${path}: ${JSON.stringify(value)}\` is older Porch's string form: read as the revision named ${JSON.stringify(value)} (the tag <package>/${value}, else the head of branch ${value}); write \`workspaceName: ${value}\``,
    })
  }
}
