/**
 * CHANGELOG.md in the format of Keep a Changelog (https://keepachangelog.com/en/1.1.0/): a release
 * moves what is under "## [Unreleased]" under "## [X.Y.Z] - YYYY-MM-DD", leaves "Unreleased" empty
 * for what comes next, and points the link references at the release's tag.
 */
import { semverPattern } from './version.js'

/** `text` with its Unreleased section released as `version` on `date` (YYYY-MM-DD); `repository` is https://github.com/OWNER/NAME. */
export function releaseChangelog(text: string, version: string, date: string, repository: string): string {
  const lines = text.split('\n')
  const heading = (line: string) => /^## \[/.test(line)
  const unreleased = lines.findIndex((line) => /^## \[Unreleased\]\s*$/.test(line))
  if (unreleased < 0) throw new Error('CHANGELOG.md has no "## [Unreleased]" section')
  if (lines.some((line) => line.startsWith(`## [${version}]`)))
    throw new Error(`CHANGELOG.md already has a section for ${version}`)
  // The section ends at the next release's heading, or at the link references, or at the end.
  let end = lines.findIndex((line, i) => i > unreleased && (heading(line) || /^\[[^\]]+\]: /.test(line)))
  if (end < 0) end = lines.length
  const body = lines.slice(unreleased + 1, end)
  while (body.length > 0 && body[0]!.trim() === '') body.shift()
  while (body.length > 0 && body[body.length - 1]!.trim() === '') body.pop()
  if (body.length === 0) throw new Error('CHANGELOG.md: nothing under "## [Unreleased]" to release')

  const previous = new RegExp(`^## \\[(${semverPattern})\\]`).exec(lines.slice(end).find(heading) ?? '')?.[1]
  const released = [...lines.slice(0, unreleased + 1), '', `## [${version}] - ${date}`, '', ...body, '']
  const rest = lines.slice(end).filter((line) => !/^\[Unreleased\]: /.test(line))
  // The link references: Unreleased compares with this release, this release with the one before.
  const links = [
    `[Unreleased]: ${repository}/compare/v${version}...HEAD`,
    previous
      ? `[${version}]: ${repository}/compare/v${previous}...v${version}`
      : `[${version}]: ${repository}/releases/tag/v${version}`,
  ]
  const firstLink = rest.findIndex((line) => /^\[[^\]]+\]: /.test(line))
  const out =
    firstLink < 0
      ? [...released, ...rest, ...links]
      : [...released, ...rest.slice(0, firstLink), ...links, ...rest.slice(firstLink)]
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/\n*$/, '')}\n`
}
