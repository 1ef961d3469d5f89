/**
 * Reads a sampling heap profile (bench/allocation-sampler.ts) and prints where the process allocated: the share of
 * the sampled bytes by the nearest frame of the gateway's own code (`src/`) above each allocation, and by its file.
 *
 *   node dist/bench/allocation-report.js /tmp/alloc/allocation-1234.heapprofile [rows]
 */
import { pathToFileURL } from 'node:url';
import { profileFileArguments } from './profile-file-arguments.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

export interface AllocationSites {
  totalBytes: number;
  /** `function file:line` of the nearest own frame (or `(outside src) function`), bytes, most first. */
  byFrame: Array<[string, number]>;
  /** The own file, or `(outside src)`, bytes, most first. */
  byFile: Array<[string, number]>;
}

const OWN_CODE = '/src/';

/** `src/…` of a script URL of own code. */
function ownFile(url: string): string {
  return url.slice(url.lastIndexOf(OWN_CODE) + 1);
}

/** Attributes each node's own bytes to the nearest frame of own code at or above it. */
export function allocationSites(head: ProfileNode): AllocationSites {
  const byFrame = new Map<string, number>();
  const byFile = new Map<string, number>();
  let totalBytes = 0;
  const add = (map: Map<string, number>, key: string, bytes: number): void => {
    map.set(key, (map.get(key) ?? 0) + bytes);
  };
  const walk = (node: ProfileNode, own: { frame: string; file: string } | null): void => {
    const { callFrame } = node;
    const file = callFrame.url.includes(OWN_CODE) ? ownFile(callFrame.url) : null;
    const here = file === null ? own : { frame: `${callFrame.functionName || '(anonymous)'} ${file}:${callFrame.lineNumber + 1}`, file };
    if (node.selfSize > 0) {
      totalBytes += node.selfSize;
      add(byFrame, here?.frame ?? `(outside src) ${callFrame.functionName || '(anonymous)'}`, node.selfSize);
      add(byFile, here?.file ?? '(outside src)', node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, null);
  const sorted = (map: Map<string, number>): Array<[string, number]> => [...map].sort((left, right) => right[1] - left[1]);
  return { totalBytes, byFrame: sorted(byFrame), byFile: sorted(byFile) };
}

function main(): void {
  const { profile, rows } = profileFileArguments('node dist/bench/allocation-report.js FILE.heapprofile [rows]');
  const sites = allocationSites((profile as { head: ProfileNode }).head);
  const share = (bytes: number): string => `${((100 * bytes) / sites.totalBytes).toFixed(2).padStart(6)} %`;
  console.log(`sampled ${(sites.totalBytes / 1048576).toFixed(1)} MiB`);
  console.log('\nby nearest own frame');
  for (const [frame, bytes] of sites.byFrame.slice(0, rows)) console.log(`${share(bytes)}  ${frame}`);
  console.log('\nby own file');
  for (const [name, bytes] of sites.byFile.slice(0, rows)) console.log(`${share(bytes)}  ${name}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
