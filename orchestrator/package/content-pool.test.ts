import { ContentPool } from './content-pool.js'
import { fileText, textFile } from './files.js'

describe('ContentPool', () => {
  it('gives one object per content and mode', () => {
    const pool = new ContentPool()
    const first = pool.file(textFile('a: 1\n'))
    expect(fileText(first)).toBe('a: 1\n')
    expect(pool.file(textFile('a: 1\n'))).toBe(first)
    expect(pool.text('a: 1\n')).toBe(first)
    const executable = pool.file(textFile('a: 1\n', true))
    expect(executable).not.toBe(first)
    expect(executable.executable).toBe(true)
    expect(pool.text('a: 1\n', true)).toBe(executable)
    expect(pool.file(textFile('a: 2\n'))).not.toBe(first)
  })

  it('keeps the bytes of a pooled file apart from the buffer it was a view of', () => {
    const pool = new ContentPool()
    const whole = Buffer.from('x: 1\ny: 2\n')
    const view = { content: whole.subarray(0, 5) }
    const pooled = pool.file(view)
    expect(pooled.content.buffer).not.toBe(whole.buffer)
    expect(pooled.content.buffer.byteLength).toBe(5)
    expect(fileText(pooled)).toBe('x: 1\n')
  })

  it('tells contents apart byte for byte, UTF-8 included', () => {
    const pool = new ContentPool()
    const accented = pool.text('name: é\n')
    expect(pool.file({ content: Buffer.from('name: é\n', 'utf8') })).toBe(accented)
    expect(pool.file({ content: Buffer.from('name: é\n', 'latin1') })).not.toBe(accented)
    expect(fileText(accented)).toBe('name: é\n')
  })

  it('pools a package into a new map, leaving the given one as it is', () => {
    const pool = new ContentPool()
    const a = new Map([['x.yaml', textFile('x: 1\n')]])
    const b = new Map([['x.yaml', textFile('x: 1\n')]])
    const pooledA = pool.files(a)
    const pooledB = pool.files(b)
    expect(pooledB.get('x.yaml')).toBe(pooledA.get('x.yaml'))
    expect(pooledB).not.toBe(b)
    expect(b.get('x.yaml')).not.toBe(pooledA.get('x.yaml'))
  })

  it('forgets the least recently used contents past its budget', () => {
    const pool = new ContentPool(2)
    const first = pool.text('1\n')
    pool.text('2\n')
    pool.text('3\n')
    expect(pool.text('1\n')).not.toBe(first)
  })
})
