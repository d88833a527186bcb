/**
 * Where the end-to-end benchmarks write, and when they clean up. On disk
 * nothing is removed before the process exits (see render.bench.ts: on ext4,
 * creating files soon after deleting many is many times slower). In memory
 * (tmpfs, as with KPT_VARIANTS_BENCH_TMP=/dev/shm) it is the other way round:
 * what finished cases wrote holds memory the next ones need, and on this
 * project's 2-CPU VM 10,000 new variants took 32 s instead of 18 s beside 7 GiB
 * of such files (reclaiming memory: system time 23 s instead of 9 s). So
 * there, a case's output is removed once no later case reads it.
 */
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { resolve } from 'node:path'

/** The directory the end-to-end benchmarks write under: KPT_VARIANTS_BENCH_TMP, else the system's temporary directory. */
export function benchTmp(): string {
  return resolve(process.env['KPT_VARIANTS_BENCH_TMP'] || tmpdir())
}

/** The type of the file system holding `dir` (the mount whose point is the longest prefix of it, on Linux), if known. */
export function fileSystemOf(dir: string): string | undefined {
  try {
    const mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .filter(
        ([, point]) => point !== undefined && (dir === point || dir.startsWith(point === '/' ? '/' : `${point}/`)),
      )
      .sort((a, b) => b[1]!.length - a[1]!.length)
    return mounts[0]?.[2]
  } catch {
    return undefined
  }
}

const inMemory = ['tmpfs', 'ramfs'].includes(fileSystemOf(benchTmp()) ?? '')

/** Removes `dir` now if the benchmarks write to memory; on disk it stays until the process exits. */
export function releaseWhenInMemory(dir: string): void {
  if (inMemory) rmSync(dir, { recursive: true, force: true })
}

/**
 * Waits until what was just written is older than the two seconds in which a
 * file's metadata is not trusted (statPackageDirectory): in use a re-render
 * comes long after the last write, while one run straight after another would
 * compare every package written in the last two seconds by content.
 */
export function agePastRacyWindow(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2100))
}
