/**
 * A set of a variable's values (indices into its domain), as bits. Immutable:
 * every operation returns a new set, so the partial solution can keep each
 * step's set for conflict resolution.
 */
export class ValueSet {
  private constructor(
    /** The domain size. */
    readonly size: number,
    private readonly words: Uint32Array,
  ) {}

  /** No value. */
  static empty(size: number): ValueSet {
    return new ValueSet(size, new Uint32Array((size + 31) >>> 5))
  }

  /** Every value of the domain. */
  static full(size: number): ValueSet {
    const words = new Uint32Array((size + 31) >>> 5)
    words.fill(0xffffffff)
    return new ValueSet(size, trim(words, size))
  }

  /** The values whose index passes the test. */
  static where(size: number, test: (index: number) => boolean): ValueSet {
    const words = new Uint32Array((size + 31) >>> 5)
    for (let i = 0; i < size; i++) if (test(i)) words[i >>> 5]! |= 1 << (i & 31)
    return new ValueSet(size, words)
  }

  has(index: number): boolean {
    return (this.words[index >>> 5]! & (1 << (index & 31))) !== 0
  }

  and(other: ValueSet): ValueSet {
    const out = new Uint32Array(this.words.length)
    for (let i = 0; i < out.length; i++) out[i] = this.words[i]! & other.words[i]!
    return new ValueSet(this.size, out)
  }

  or(other: ValueSet): ValueSet {
    const out = new Uint32Array(this.words.length)
    for (let i = 0; i < out.length; i++) out[i] = this.words[i]! | other.words[i]!
    return new ValueSet(this.size, out)
  }

  /** The complement within the domain. */
  not(): ValueSet {
    const out = new Uint32Array(this.words.length)
    for (let i = 0; i < out.length; i++) out[i] = ~this.words[i]!
    return new ValueSet(this.size, trim(out, this.size))
  }

  isEmpty(): boolean {
    for (const w of this.words) if (w !== 0) return false
    return true
  }

  isFull(): boolean {
    return this.not().isEmpty()
  }

  /** True when every value of this set is in `other`. */
  subsetOf(other: ValueSet): boolean {
    for (let i = 0; i < this.words.length; i++) if ((this.words[i]! & ~other.words[i]!) !== 0) return false
    return true
  }

  /** True when the sets share no value. */
  disjoint(other: ValueSet): boolean {
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

function trim(words: Uint32Array, size: number): Uint32Array {
  const rest = size & 31
  if (rest !== 0 && words.length > 0) words[words.length - 1]! &= (1 << rest) - 1
  return words
}
