/**
 * A set of a variable's values (indices into its domain), as bits. Immutable:
 * every operation returns a new set, so the partial solution can keep each
 * step's set for conflict resolution. Words hold 30 bits so they stay small
 * integers for V8 (typed arrays cost far more to allocate than these tiny sets).
 */
const bits = 30
const wordMask = (1 << bits) - 1

/** Sets of one word are shared (interned): most domains are small, and most sets repeat. */
const interned = new Map<number, ValueSet>()
const maxInterned = 100_000

export class ValueSet {
  private constructor(
    /** The domain size. */
    readonly size: number,
    private readonly words: number[],
  ) {}

  private static make(size: number, words: number[]): ValueSet {
    if (words.length !== 1) return new ValueSet(size, words)
    const key = words[0]! * 32 + size
    let set = interned.get(key)
    if (!set) {
      set = new ValueSet(size, words)
      if (interned.size < maxInterned) interned.set(key, set)
    }
    return set
  }

  private static word(size: number, word: number): ValueSet {
    const key = word * 32 + size
    return interned.get(key) ?? ValueSet.make(size, [word])
  }

  /** No value. */
  static empty(size: number): ValueSet {
    return ValueSet.make(size, new Array<number>(wordCount(size)).fill(0))
  }

  /** Every value of the domain. */
  static full(size: number): ValueSet {
    return ValueSet.make(size, trim(new Array<number>(wordCount(size)).fill(wordMask), size))
  }

  /** The values whose index passes the test. */
  static where(size: number, test: (index: number) => boolean): ValueSet {
    if (size <= bits) {
      let word = 0
      for (let i = 0; i < size; i++) if (test(i)) word |= 1 << i
      return ValueSet.word(size, word)
    }
    const words = new Array<number>(wordCount(size)).fill(0)
    for (let i = 0; i < size; i++) if (test(i)) words[(i / bits) | 0]! |= 1 << (i % bits)
    return ValueSet.make(size, words)
  }

  /** The values at these indices. */
  static of(size: number, indices: readonly number[]): ValueSet {
    if (size <= bits) {
      let word = 0
      for (const i of indices) word |= 1 << i
      return ValueSet.word(size, word)
    }
    const words = new Array<number>(wordCount(size)).fill(0)
    for (const i of indices) words[(i / bits) | 0]! |= 1 << (i % bits)
    return ValueSet.make(size, words)
  }

  has(index: number): boolean {
    return (this.words[(index / bits) | 0]! & (1 << (index % bits))) !== 0
  }

  and(other: ValueSet): ValueSet {
    if (this.words.length === 1) return ValueSet.word(this.size, this.words[0]! & other.words[0]!)
    const out = new Array<number>(this.words.length)
    for (let i = 0; i < out.length; i++) out[i] = this.words[i]! & other.words[i]!
    return ValueSet.make(this.size, out)
  }

  or(other: ValueSet): ValueSet {
    if (this.words.length === 1) return ValueSet.word(this.size, this.words[0]! | other.words[0]!)
    const out = new Array<number>(this.words.length)
    for (let i = 0; i < out.length; i++) out[i] = this.words[i]! | other.words[i]!
    return ValueSet.make(this.size, out)
  }

  /** The complement within the domain. */
  not(): ValueSet {
    if (this.words.length === 1) return ValueSet.word(this.size, trim([~this.words[0]! & wordMask], this.size)[0]!)
    const out = new Array<number>(this.words.length)
    for (let i = 0; i < out.length; i++) out[i] = ~this.words[i]! & wordMask
    return ValueSet.make(this.size, trim(out, this.size))
  }

  isEmpty(): boolean {
    for (const w of this.words) if (w !== 0) return false
    return true
  }

  isFull(): boolean {
    return this.count() === this.size
  }

  /** True when every value of this set is in `other`. */
  subsetOf(other: ValueSet): boolean {
    if (this.words.length === 1) return (this.words[0]! & ~other.words[0]!) === 0
    for (let i = 0; i < this.words.length; i++) if ((this.words[i]! & ~other.words[i]!) !== 0) return false
    return true
  }

  /** True when the sets share no value. */
  disjoint(other: ValueSet): boolean {
    if (this.words.length === 1) return (this.words[0]! & other.words[0]!) === 0
    for (let i = 0; i < this.words.length; i++) if ((this.words[i]! & other.words[i]!) !== 0) return false
    return true
  }

  count(): number {
    let n = 0
    for (let w of this.words) {
      while (w !== 0) {
        w &= w - 1
        n++
      }
    }
    return n
  }

  /** The indices in ascending order. */
  indices(): number[] {
    const out: number[] = []
    for (let i = 0; i < this.size; i++) if (this.has(i)) out.push(i)
    return out
  }
}

function wordCount(size: number): number {
  return Math.ceil(size / bits)
}

function trim(words: number[], size: number): number[] {
  const rest = size % bits
  if (rest !== 0 && words.length > 0) words[words.length - 1]! &= (1 << rest) - 1
  return words
}
