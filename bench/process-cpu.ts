/**
 * CPU time of a process group (the gateway, its cluster workers and their threads), read from /proc on Linux.
 * Requests per second move with whatever else runs on the machine; the gateway's CPU time per request does not,
 * so it is the figure to judge hot-path changes by.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime in clock ticks and the process group of one /proc/<pid>/stat line. */
function parseStat(line: string): { group: number; ticks: number } | null {
  // The command name is in parentheses and may hold spaces; the fields after it start at field 3 (state).
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const group = Number(fields[2]);
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(group) && Number.isFinite(ticks) ? { group, ticks } : null;
}

/** /proc/<pid>/stat of the live processes of group `groupId`; undefined where /proc is not available. */
export function groupStats(groupId: number): Array<{ group: number; ticks: number }> | undefined {
  if (process.platform !== 'linux') return undefined;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const stats: Array<{ group: number; ticks: number }> = [];
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: ReturnType<typeof parseStat>;
    try {
      stat = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
    } catch {
      continue; // the process ended meanwhile
    }
    if (stat !== null && stat.group === groupId) stats.push(stat);
  }
  return stats;
}

/**
 * User + system CPU milliseconds used so far by the live processes of group `groupId` (the bench starts the gateway
 * as a group leader); undefined where /proc is not available.
 */
export function groupCpuMs(groupId: number): number | undefined {
  const stats = groupStats(groupId);
  if (stats === undefined || stats.length === 0) return undefined;
  return (stats.reduce((ticks, stat) => ticks + stat.ticks, 0) * 1000) / clockTicksPerSecond();
}
