import { parseSelectorOption } from './selector.js'

function matches(text: string, labels: Record<string, string>): boolean {
  const parsed = parseSelectorOption(text)
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.matches(labels)
}

describe('--selector', () => {
  test("reads kubectl's forms", () => {
    const eu = { tier: 'edge', region: 'eu-west1' }
    expect(matches('tier=edge', eu)).toBe(true)
    expect(matches('tier==edge,region=us-east1', eu)).toBe(false)
    expect(matches('region in (eu-west1, eu-north1),tier!=canary', eu)).toBe(true)
    expect(matches('region notin (eu-west1)', eu)).toBe(false)
    expect(matches('tier,!legacy', eu)).toBe(true)
    expect(matches('!tier', eu)).toBe(false)
  })

  test('says what it cannot read', () => {
    expect(parseSelectorOption('tier=edge,')).toEqual({
      ok: false,
      error: '--selector "tier=edge,": an empty requirement (a stray comma?)',
    })
    expect(parseSelectorOption('region in (eu')).toEqual({
      ok: false,
      error: '--selector "region in (eu": unbalanced parentheses',
    })
    expect(parseSelectorOption('a b')).toMatchObject({ ok: false, error: expect.stringContaining('cannot read "a b"') })
    expect(parseSelectorOption('tier=a b')).toMatchObject({ ok: false })
    expect(parseSelectorOption('Bad Key=x')).toMatchObject({ ok: false })
    expect(parseSelectorOption('tier=bad value!')).toMatchObject({ ok: false })
  })
})
