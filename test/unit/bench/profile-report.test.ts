import { describe, expect, it } from 'vitest';
import { profileReport, subsystemOf, type CpuProfile, type CpuProfileNode } from '../../../bench/profile-report.js';

const SRC = 'file:///app/dist/src';

/** A profile from stacks (outermost first) and the microseconds each was sampled for. */
function profileOf(samples: Array<[frames: Array<[name: string, url: string]>, micros: number]>): CpuProfile {
  const nodes: CpuProfileNode[] = [{ id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [] }];
  const ids: number[] = [];
  for (const [frames] of samples) {
    let at = nodes[0] as CpuProfileNode;
    for (const [functionName, url] of frames) {
      let child = (at.children ?? []).map((id) => nodes[id - 1] as CpuProfileNode).find((node) => node.callFrame.functionName === functionName && node.callFrame.url === url);
      if (child === undefined) {
        child = { id: nodes.length + 1, callFrame: { functionName, url, lineNumber: 9 }, children: [] };
        nodes.push(child);
        at.children?.push(child.id);
      }
      at = child;
    }
    ids.push(at.id);
  }
  return { nodes, samples: ids, timeDeltas: samples.map(([, micros]) => micros) };
}

describe('CPU profile report', () => {
  it('names the subsystem of a frame by its script, Node and storage frames only as a fallback', () => {
    expect(subsystemOf({ functionName: 'info', url: `${SRC}/shared/logger.js`, lineNumber: 1 })).toEqual({ name: 'access log', fallback: false });
    expect(subsystemOf({ functionName: 'admitLimits', url: `${SRC}/relay/admission.js`, lineNumber: 1 })).toEqual({ name: 'admission / limits', fallback: false });
    expect(subsystemOf({ functionName: 'attemptOne', url: `${SRC}/relay/relay-chat.js`, lineNumber: 1 })).toEqual({ name: 'relay / upstream', fallback: false });
    expect(subsystemOf({ functionName: 'x', url: `${SRC}/storage/repositories/usage-log-repository.js`, lineNumber: 1 })).toEqual({ name: 'usage log', fallback: false });
    expect(subsystemOf({ functionName: 'end', url: 'node:_http_outgoing', lineNumber: 1 })).toEqual({ name: 'answer writing', fallback: true });
    expect(subsystemOf({ functionName: 'run', url: `${SRC}/storage/dialects.js`, lineNumber: 1 })).toEqual({ name: 'storage (caller not on the stack)', fallback: true });
    expect(subsystemOf({ functionName: 'emit', url: 'node:events', lineNumber: 1 })).toBeNull();
  });

  it('sums the request window by innermost subsystem and by every subsystem on the stack, with writes apart', () => {
    const frame = `${SRC}/operations/metered-frame.js`;
    const profile = profileOf([
      [[['(program)', '']], 1000], // start-up, before the first request: left out
      [[['handler', frame], ['authenticate', `${SRC}/http/authenticate.js`], ['verify', `${SRC}/auth/key-verifier.js`]], 10],
      [[['passThroughWhole', `${SRC}/relay/relay-chat.js`], ['send', `${SRC}/http/response-sink.js`], ['end', 'node:_http_outgoing'], ['writev', '']], 30],
      [[['passThroughWhole', `${SRC}/relay/relay-chat.js`], ['quote', `${SRC}/billing/answer-report.js`]], 5],
      [[['(garbage collector)', '']], 20],
      [[['(idle)', '']], 500],
      [[['run', `${SRC}/storage/dialects.js`]], 4],
      [[['settleMetered', frame], ['settle', `${SRC}/billing/settle.js`], ['adjust', `${SRC}/limits/in-memory-rate-limiter.js`]], 6],
      [[['flush', `${SRC}/shared/logger.js`], ['writeUtf8String', '']], 7], // after the last request: left out
    ]);
    const report = profileReport(profile);
    expect(report.busy).toBe(75);
    const shares = Object.fromEntries(report.subsystems.map((row) => [row.name, [row.inclusive, row.own]]));
    expect(shares).toEqual({
      'auth / key lookup': [10, 10],
      'settlement / money': [11, 5],
      'http intake': [10, 0],
      'answer writing': [30, 0],
      'relay / upstream': [35, 0],
      'socket/pipe writes (answer writing)': [0, 30],
      'garbage collection': [0, 20],
      'storage (caller not on the stack)': [4, 4],
      'admission / limits': [6, 6],
    });
    expect(report.byFunction[0]).toEqual(['writev ', 30]);
    expect(report.byFile.find(([name]) => name === 'src/http/authenticate.js')).toBeUndefined();
    expect(report.byFile.find(([name]) => name === 'src/auth/key-verifier.js')).toEqual(['src/auth/key-verifier.js', 10]);
  });
});
