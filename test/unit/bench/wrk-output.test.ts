import { describe, expect, it } from 'vitest';
import { luaString, parseWrkOutput, wrkScript, wrkSideResult } from '../../../bench/wrk.js';
import { openAIChatRequest } from '../../../bench/requests.js';
import { sumReadings } from '../../../bench/memory.js';

const WRK_OUTPUT = `Running 3s test @ http://127.0.0.1:4000/v1/chat/completions
  1 threads and 32 connections
  30000 requests in 3.00s, 20.00MB read
  Non-2xx or 3xx responses: 100
Requests/sec:  10000.00
WRK_RESULT {"durationUs":3000000,"requests":30000,"connectErrors":0,"readErrors":2,"writeErrors":0,"timeouts":1,"non2xx3xx":100,"mismatches":5,"statuses":{"200":29900,"503":100},"p50Us":2500.5,"p99Us":9000.0,"meanUs":3000.0,"perThread":{"min":9000.0,"max":11000.0,"stdev":500.0},"threads":1}
`;

describe('wrk load generator', () => {
  it('writes the body as a Lua string literal that keeps every byte, quotes and backslashes included', () => {
    expect(luaString('a"b\\c\nd"1')).toBe('"a\\034b\\092c\\010d\\0341"');
    expect(luaString('é')).toBe('"\\195\\169"');
  });

  it('puts the request, its headers and the answer check into the script', () => {
    const spec = openAIChatRequest('http://127.0.0.1:4000/v1/chat/completions', 'sk-test', 'bench-model', true);
    const script = wrkScript(spec);
    expect(script).toContain('wrk.method = "POST"');
    expect(script).toContain(`wrk.headers["authorization"] = "Bearer sk-test"`);
    expect(script).toContain(`local marker = "[DONE]"`);
    expect(script).toContain(luaString(spec.body));
  });

  it('reads the result line into the figures the table shows: 2xx per second, failures counted against the 1% rule', () => {
    const result = wrkSideResult('http://x', parseWrkOutput(WRK_OUTPUT));
    expect(result.generator).toBe('wrk');
    expect(result.requestsPerSec).toBeCloseTo(29_900 / 3, 6);
    expect(result.ok2xx).toBe(29_900);
    expect(result.non2xx).toBe(100);
    expect(result.errors).toBe(3);
    expect(result.mismatches).toBe(5);
    expect(result.errorRate).toBeCloseTo((100 + 3 + 5) / 30_003, 9);
    expect(result.latencyP50Ms).toBeCloseTo(2.5005, 9);
    expect(result.latencyP99Ms).toBe(9);
    expect(result.statusCodes).toEqual({ '200': 29_900, '503': 100 });
  });

  it('says so when wrk printed no result line', () => {
    expect(() => parseWrkOutput('unable to connect to 127.0.0.1:4000 Connection refused\n')).toThrow(/no result line/);
  });
});

describe('memory readings of a process group', () => {
  it('adds up the processes in MiB, and leaves out the after-GC figures when one process could not run a GC', () => {
    const mib = 1 << 20;
    const both = sumReadings([
      { pid: 1, rssBytes: 100 * mib, heapUsedBytes: 40 * mib, rssAfterGcBytes: 90 * mib, heapUsedAfterGcBytes: 30 * mib },
      { pid: 2, rssBytes: 50 * mib, heapUsedBytes: 10 * mib, rssAfterGcBytes: 45 * mib, heapUsedAfterGcBytes: 8 * mib },
    ]);
    expect(both).toMatchObject({ processes: 2, rssMiB: 150, heapUsedMiB: 50, rssAfterGcMiB: 135, heapUsedAfterGcMiB: 38 });
    const oneWithoutGc = sumReadings([{ pid: 1, rssBytes: 100 * mib, heapUsedBytes: 40 * mib, rssAfterGcBytes: 90 * mib }, { pid: 2, rssBytes: mib, heapUsedBytes: mib }]);
    expect(oneWithoutGc.rssMiB).toBe(101);
    expect(oneWithoutGc.rssAfterGcMiB).toBeUndefined();
  });
});
