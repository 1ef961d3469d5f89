import { describe, expect, it } from 'vitest';
import { sampled } from '../../../src/telemetry/otlp-pipeline.js';

const caller = (isSampled: boolean) => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled: isSampled, flags: isSampled ? '01' : '00' });
const LOW = `${'f'.repeat(19)}0000000000000`;
const HIGH = 'f'.repeat(32);

describe('sampling', () => {
  it('follows the caller with the parent-based samplers and decides roots by the rule', () => {
    expect(sampled({ kind: 'parentbased_always_on' }, null, HIGH)).toBe(true);
    expect(sampled({ kind: 'parentbased_always_on' }, caller(false), HIGH)).toBe(false);
    expect(sampled({ kind: 'parentbased_always_off' }, null, HIGH)).toBe(false);
    expect(sampled({ kind: 'parentbased_always_off' }, caller(true), HIGH)).toBe(true);
    expect(sampled({ kind: 'always_on' }, caller(false), HIGH)).toBe(true);
    expect(sampled({ kind: 'always_off' }, caller(true), HIGH)).toBe(false);
  });

  it('keeps a trace-id ratio share decided by the trace id alone', () => {
    expect(sampled({ kind: 'traceidratio', ratio: 0.5 }, null, LOW)).toBe(true);
    expect(sampled({ kind: 'traceidratio', ratio: 0.5 }, null, HIGH)).toBe(false);
    expect(sampled({ kind: 'traceidratio', ratio: 0 }, null, LOW)).toBe(false);
    expect(sampled({ kind: 'traceidratio', ratio: 1 }, null, HIGH)).toBe(true);
    expect(sampled({ kind: 'parentbased_traceidratio', ratio: 0 }, caller(true), HIGH)).toBe(true);
  });
});
