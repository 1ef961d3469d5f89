/**
 * The C allocator the gateway runs on. glibc's malloc keeps the memory freed after a burst of connections; jemalloc
 * hands freed pages back to the operating system on a timer. Where the library is installed, `unigate serve` starts
 * itself again in the same process (execve: same pid, no wrapper) with it preloaded, before anything else loads.
 *
 * The variables that preload it (LD_PRELOAD, and MALLOC_CONF unless the operator set their own) are the launcher's,
 * not the operator's: the gateway takes them out of its environment once started, so the programs it spawns (stdio
 * MCP servers, the CLIs the tests drive) run on their own allocator, and hands them only to its own worker processes.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

export type MemoryAllocator = 'jemalloc' | 'system';

type Environment = Record<string, string | undefined>;

/** The setting's name; read as `UNIGATE_MEMORY_ALLOCATOR` first, like every setting. */
export const MEMORY_ALLOCATOR_SETTING = 'MEMORY_ALLOCATOR';

/** Freed pages go back to the OS within about a second, from a background thread (an idle process needs no allocation to trigger it). */
export const JEMALLOC_CONF = 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0';

const JEMALLOC_LIBRARY = 'libjemalloc.so.2';

/** The standard library directories of Debian/Ubuntu (both architectures), Fedora/RHEL and Alpine/Arch. */
const LIBRARY_DIRECTORIES = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib/x86_64-linux-gnu', '/lib/aarch64-linux-gnu', '/lib64', '/lib'];

/** Lists the variables the launcher added (comma-separated) so the started gateway can take exactly those out again. */
const LAUNCHER_MARK = 'UNIGATE_PRELOADED_VARIABLES';

function setting(env: Environment): string | undefined {
  const value = env[`UNIGATE_${MEMORY_ALLOCATOR_SETTING}`] ?? env[MEMORY_ALLOCATOR_SETTING];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** The chosen allocator, or null when the setting holds something else (the configuration loader reports that). */
export function readMemoryAllocator(env: Environment): MemoryAllocator | null {
  const value = setting(env) ?? 'jemalloc';
  return value === 'jemalloc' || value === 'system' ? value : null;
}

/** Where libjemalloc.so.2 is installed, or null. */
export function findJemalloc(directories: readonly string[] = LIBRARY_DIRECTORIES): string | null {
  for (const directory of directories) {
    const file = path.join(directory, JEMALLOC_LIBRARY);
    if (existsSync(file)) return file;
  }
  return null;
}

/**
 * The variables to add to start `serve` on jemalloc, or null to start as is: not on Linux, opted out, the operator's
 * own LD_PRELOAD (theirs decides), already preloaded by the launcher, or no library installed.
 */
export function preloadEnvironment(env: Environment, platform: NodeJS.Platform = process.platform): Record<string, string> | null {
  if (platform !== 'linux' || readMemoryAllocator(env) !== 'jemalloc') return null;
  if ((env.LD_PRELOAD ?? '') !== '' || env[LAUNCHER_MARK] !== undefined) return null;
  const library = findJemalloc();
  if (library === null) return null;
  const added: Record<string, string> = { LD_PRELOAD: library };
  if ((env.MALLOC_CONF ?? '') === '') added.MALLOC_CONF = JEMALLOC_CONF;
  added[LAUNCHER_MARK] = Object.keys(added).join(',');
  return added;
}

/**
 * Starts this process again on jemalloc when `preloadEnvironment` says so and this Node can replace its own process
 * image (process.execve, Node 22.15 / 23.11 and newer) and has no IPC channel to a parent; returns (changing nothing)
 * otherwise. `entry` and `args` are the script and its arguments; the Node options of this process are passed on.
 */
export function restartOnJemalloc(entry: string, args: readonly string[]): void {
  // A process started with an IPC channel to its parent keeps its allocator: the channel would not survive a new
  // process image.
  if (process.channel !== undefined) return;
  const added = preloadEnvironment(process.env);
  if (added === null || typeof process.execve !== 'function') return;
  process.execve(process.execPath, [process.execPath, ...process.execArgv, entry, ...args], { ...process.env, ...added } as Record<string, string>);
}

/** The variables the launcher preloaded jemalloc with, taken out of this process's environment (once). */
let launcherVariables: Record<string, string> = {};

/** Takes the launcher's variables out of `process.env` (children spawned from here on do not inherit them). */
export function forgetLauncherVariables(env: Environment = process.env): void {
  const mark = env[LAUNCHER_MARK];
  if (mark === undefined) return;
  const taken: Record<string, string> = { [LAUNCHER_MARK]: mark };
  for (const name of mark.split(',')) {
    const value = env[name];
    if (value !== undefined) taken[name] = value;
    delete env[name];
  }
  delete env[LAUNCHER_MARK];
  launcherVariables = taken;
}

/** What the gateway's own worker processes need to run on the same allocator as their primary. */
export function workerAllocatorEnvironment(): Record<string, string> {
  return { ...launcherVariables };
}
