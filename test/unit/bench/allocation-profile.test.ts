import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { allocationSites } from '../../../bench/allocation-report.js';

const frame = (functionName: string, url: string, selfSize: number, children: unknown[] = []) => ({ callFrame: { functionName, url, lineNumber: 9 }, selfSize, children });

describe('allocation profile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'allocation-profile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('puts what library code allocated on the nearest frame of own code above it', () => {
    const head = frame('(root)', '', 0, [
      frame('handle', 'file:///app/dist/src/http/handle.js', 100, [
        frame('setHeader', 'node:_http_outgoing', 300, [frame('join', '', 50)]),
        frame('parse', 'file:///app/dist/src/wire/parse.js', 400),
      ]),
      frame('processTimers', 'node:internal/timers', 150),
    ]);
    const sites = allocationSites(head as Parameters<typeof allocationSites>[0]);
    expect(sites.totalBytes).toBe(1000);
    expect(sites.byFrame).toEqual([
      ['handle src/http/handle.js:10', 450],
      ['parse src/wire/parse.js:10', 400],
      ['(outside src) processTimers', 150],
    ]);
    expect(sites.byFile).toEqual([['src/http/handle.js', 450], ['src/wire/parse.js', 400], ['(outside src)', 150]]);
  });

  it('samples what a process allocated and collected, written when it exits', () => {
    const sampler = join(dir, 'allocation-sampler.mjs');
    const source = readFileSync(new URL('../../../bench/allocation-sampler.ts', import.meta.url), 'utf8');
    writeFileSync(sampler, ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
    mkdirSync(join(dir, 'src'));
    const program = join(dir, 'src', 'garbage.mjs');
    // About 100 MB of objects that die at once: nothing of it is alive when the process exits.
    writeFileSync(program, 'function makeGarbage() { let last; for (let i = 0; i < 2e6; i++) last = { i, text: `item ${i}` }; return last.i; }\nmakeGarbage();\n');
    const profiles = join(dir, 'profiles');
    mkdirSync(profiles);
    const run = spawnSync(process.execPath, ['--import', sampler, program], { env: { ...process.env, UNIGATE_ALLOCATION_PROFILE_DIR: profiles }, encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const files = readdirSync(profiles);
    expect(files).toEqual([`allocation-${run.pid}.heapprofile`]);
    const sites = allocationSites((JSON.parse(readFileSync(join(profiles, files[0] as string), 'utf8')) as { head: Parameters<typeof allocationSites>[0] }).head);
    expect(sites.totalBytes).toBeGreaterThan(40 * 1024 * 1024);
    expect(sites.byFrame[0]?.[0]).toMatch(/^makeGarbage src\/garbage\.mjs:1$/);
    expect(sites.byFrame[0]?.[1]).toBeGreaterThan(sites.totalBytes * 0.8);
  });
});
