/**
 * What a node changes on this machine outside its directory, read before it starts and removed
 * after it stops: processes (containerd's shims), mounts (overlay roots, pod volumes, network
 * namespaces), network namespaces under /run/netns, the CNI bridge, iptables chains (kube-proxy's
 * KUBE-*, CNI's CNI-*, the kubelet's canaries) and the kubelet's cgroups (kubepods). The
 * node-cluster test checks `leftovers` is empty after a stop.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { execa } from 'execa'

export interface HostState {
  netns: string[]
  chains: string[]
}

const netnsDir = '/run/netns'
const ownChain = /^(KUBE-|CNI-)/
const cgroupRoot = '/sys/fs/cgroup'

export async function hostState(): Promise<HostState> {
  return { netns: listDir(netnsDir), chains: await chains() }
}

/** What the cluster in `dir` left: each a line naming it; empty when nothing. */
export async function leftovers(dir: string, before: HostState, bridge: string): Promise<string[]> {
  const found: string[] = []
  for (const pid of [...podProcesses(), ...processesUnder(dir)]) found.push(`process ${pid}: ${cmdline(pid)}`)
  for (const mount of mountsUnder(dir)) found.push(`mount ${mount}`)
  for (const ns of listDir(netnsDir).filter((n) => !before.netns.includes(n))) found.push(`network namespace ${ns}`)
  if (existsSync(`/sys/class/net/${bridge}`)) found.push(`network interface ${bridge}`)
  for (const chain of (await chains()).filter((c) => !before.chains.includes(c))) found.push(`iptables chain ${chain}`)
  for (const cgroup of kubeCgroups()) found.push(`cgroup ${cgroup}`)
  return found
}

/**
 * Removes what a node killed with its test process (no stop) left: its programs (those run from
 * `binDir`), its pods' processes, and then what `removeLeftovers` removes for every temporary
 * node directory. Run before a node starts, so one killed run does not break the next.
 */
export async function removeStaleNodes(binDir: string, bridge: string): Promise<void> {
  const programs = listDir('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => cmdline(pid).startsWith(`${binDir}/`))
  if (!programs.length && !kubeCgroups().length && !existsSync(`/sys/class/net/${bridge}`)) return
  console.warn(`node cluster: removing what an earlier node left (${programs.length} of its processes)`)
  for (const pid of programs) kill(pid)
  const empty: HostState = { netns: [], chains: [] }
  const tmp = dirname(mkdtempPrefix)
  for (const dir of listDir(tmp).filter((d) => d.startsWith(basename(mkdtempPrefix))))
    await removeLeftovers(join(tmp, dir), empty, bridge)
  await removeLeftovers('/nonexistent-node-dir', empty, bridge)
}

/** The prefix of a node's temporary directory (node-cluster.ts makes it). */
export const mkdtempPrefix = join(tmpdir(), 'kpt-variants-node-')

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone already
  }
}

/** Removes what `leftovers` finds, in the order that lets each go: processes, mounts, namespaces, links, rules, cgroups. */
export async function removeLeftovers(dir: string, before: HostState, bridge = 'kptv0'): Promise<void> {
  for (const pid of podProcesses()) kill(pid)
  for (const pid of processesUnder(dir)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }
  for (const mount of mountsUnder(dir)) await execa('umount', ['-l', mount], { reject: false })
  for (const ns of listDir(netnsDir).filter((n) => !before.netns.includes(n))) {
    await execa('umount', ['-l', join(netnsDir, ns)], { reject: false })
    rmSync(join(netnsDir, ns), { force: true })
  }
  if (existsSync(`/sys/class/net/${bridge}`)) await execa('ip', ['link', 'delete', bridge], { reject: false })
  await removeChains(before.chains)
  for (const cgroup of kubeCgroups()) removeCgroup(cgroup)
  for (const link of listDir('/var/log/containers')) {
    const file = join('/var/log/containers', link)
    try {
      if (readlinkSync(file).startsWith(dir)) rmSync(file, { force: true })
    } catch {
      // not a link
    }
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort()
  } catch {
    return []
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
  } catch {
    return ''
  }
}

/** Processes whose command line names `dir` (a shim names its containerd's socket and state). */
function processesUnder(dir: string): number[] {
  return listDir('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => pid !== process.pid && cmdline(pid).includes(dir))
}

/** Mount points under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4]?.replace(/\\040/g, ' '))
    .filter((point): point is string => point !== undefined && point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length)
}

const tables = ['filter', 'nat', 'mangle'] as const

/** Every chain named like a node's, as `table/chain`. */
async function chains(): Promise<string[]> {
  const found: string[] = []
  for (const table of tables) {
    const { stdout } = await execa('iptables-save', ['-t', table], { reject: false })
    for (const line of stdout.split('\n'))
      if (line.startsWith(':') && ownChain.test(line.slice(1))) found.push(`${table}/${line.slice(1).split(' ')[0]}`)
  }
  return found.sort()
}

/** Deletes every node chain not in `keep`, with the rules that jump to it, one table at a time. */
async function removeChains(keep: string[]): Promise<void> {
  for (const table of tables) {
    const { stdout } = await execa('iptables-save', ['-t', table], { reject: false })
    const gone = new Set(
      stdout
        .split('\n')
        .filter((l) => l.startsWith(':'))
        .map((l) => l.slice(1).split(' ')[0]!)
        .filter((c) => ownChain.test(c) && !keep.includes(`${table}/${c}`)),
    )
    if (!gone.size) continue
    const mentions = (line: string) =>
      [...gone].some((c) => line.includes(` ${c} `) || line.endsWith(` ${c}`) || line.startsWith(`:${c} `))
    const kept = stdout.split('\n').filter((line) => !line.startsWith('#') && !mentions(line))
    await execa('iptables-restore', ['-T', table], { input: `${kept.join('\n')}\n`, reject: false })
  }
}

/** The processes of pods (in the kubelet's cgroups): a shim killed leaves its container's processes running. */
function podProcesses(): number[] {
  const pids = new Set<number>()
  const collect = (dir: string): void => {
    for (const entry of listDir(dir)) {
      const path = join(dir, entry)
      if (entry === 'cgroup.procs')
        for (const pid of readFileSync(path, 'utf8').split('\n').filter(Boolean)) pids.add(Number(pid))
      else if (!entry.includes('.')) {
        try {
          if (statSync(path).isDirectory()) collect(path)
        } catch {
          // gone already
        }
      }
    }
  }
  for (const cgroup of kubeCgroups()) collect(cgroup)
  return [...pids]
}

/** The kubelet's cgroups (kubepods, and the QoS and pod groups below it), in every v1 hierarchy. */
function kubeCgroups(): string[] {
  return listDir(cgroupRoot)
    .map((controller) => join(cgroupRoot, controller, 'kubepods'))
    .filter((dir) => {
      try {
        return statSync(dir).isDirectory()
      } catch {
        return false
      }
    })
}

/** Removes a cgroup and those below it, deepest first (a cgroup directory goes with rmdir alone). */
function removeCgroup(dir: string): void {
  for (const entry of listDir(dir)) {
    const child = join(dir, entry)
    try {
      if (statSync(child).isDirectory()) removeCgroup(child)
    } catch {
      // gone already
    }
  }
  try {
    rmdirSync(dir)
  } catch {
    // still in use or gone: leftovers() reports it
  }
}
