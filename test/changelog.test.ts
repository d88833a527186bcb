/** A release moves CHANGELOG.md's Unreleased section under its version, as Keep a Changelog lays it out. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { releaseChangelog } from '../scripts/changelog.js'
import { repositoryRoot } from './support/root.js'

const repo = 'https://github.com/kpt-variants/kpt-variants'

const first = `# Changelog

Intro.

## [Unreleased]

### Added

- a render
- a demo

[Unreleased]: ${repo}/commits/main
`

test('the first release takes the Unreleased section, which stays empty, and links to its tag', () => {
  expect(releaseChangelog(first, '0.1.0', '2026-12-01', repo)).toBe(`# Changelog

Intro.

## [Unreleased]

## [0.1.0] - 2026-12-01

### Added

- a render
- a demo

[Unreleased]: ${repo}/compare/v0.1.0...HEAD
[0.1.0]: ${repo}/releases/tag/v0.1.0
`)
})

test('a later release sits above the one before and compares with it', () => {
  const released = releaseChangelog(first, '0.1.0', '2026-12-01', repo).replace(
    '## [Unreleased]\n',
    '## [Unreleased]\n\n### Fixed\n\n- a crash\n',
  )
  expect(releaseChangelog(released, '0.2.0', '2027-01-15', repo)).toBe(`# Changelog

Intro.

## [Unreleased]

## [0.2.0] - 2027-01-15

### Fixed

- a crash

## [0.1.0] - 2026-12-01

### Added

- a render
- a demo

[Unreleased]: ${repo}/compare/v0.2.0...HEAD
[0.2.0]: ${repo}/compare/v0.1.0...v0.2.0
[0.1.0]: ${repo}/releases/tag/v0.1.0
`)
})

test('nothing to release, a version released before, or no Unreleased section is refused', () => {
  const released = releaseChangelog(first, '0.1.0', '2026-12-01', repo)
  expect(() => releaseChangelog(released, '0.1.1', '2026-12-02', repo)).toThrow(
    'CHANGELOG.md: nothing under "## [Unreleased]" to release',
  )
  expect(() =>
    releaseChangelog(released.replace('## [Unreleased]\n', '## [Unreleased]\n\n- x\n'), '0.1.0', 'd', repo),
  ).toThrow('CHANGELOG.md already has a section for 0.1.0')
  expect(() => releaseChangelog('# Changelog\n', '0.1.0', 'd', repo)).toThrow('no "## [Unreleased]" section')
})

test("the repository's CHANGELOG.md can be released: it has an Unreleased section with something in it", () => {
  const text = readFileSync(join(repositoryRoot(), 'CHANGELOG.md'), 'utf8')
  expect(releaseChangelog(text, '99.0.0', '2099-01-01', repo)).toContain('## [99.0.0] - 2099-01-01\n\n### ')
})
