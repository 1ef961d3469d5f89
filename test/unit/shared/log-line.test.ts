/** A log line is one JSON object: time, level and message first, then the caller's fields, as a spread would lay them out. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/shared/logger.js';

function linesOf(log: (logger: ReturnType<typeof createLogger>) => void): string[] {
  const lines: string[] = [];
  log(createLogger('debug', (line) => lines.push(line)));
  return lines;
}

describe('log line', () => {
  it('puts time, level and message first, then the fields in their order, one line each', () => {
    const [line] = linesOf((logger) => logger.warn('slow "query"\n', { request_id: 'req_1', status: 200, trace_id: null, nested: { a: [1] } }));
    expect(line?.endsWith('}\n')).toBe(true);
    expect(line?.slice(0, -1)).not.toContain('\n');
    const parsed = JSON.parse(line as string) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['time', 'level', 'message', 'request_id', 'status', 'trace_id', 'nested']);
    expect(parsed).toMatchObject({ level: 'warn', message: 'slow "query"\n', request_id: 'req_1', status: 200, trace_id: null, nested: { a: [1] } });
    expect(Number.isNaN(Date.parse(parsed.time as string))).toBe(false);
  });

  it('writes no fields for none, an empty set, or fields that are all undefined', () => {
    const lines = linesOf((logger) => {
      logger.info('a');
      logger.info('b', {});
      logger.info('c', { gone: undefined });
    });
    expect(lines.map((line) => Object.keys(JSON.parse(line) as object))).toEqual([
      ['time', 'level', 'message'],
      ['time', 'level', 'message'],
      ['time', 'level', 'message'],
    ]);
  });

  it('lets a field named like a leading key replace its value in place', () => {
    const [line] = linesOf((logger) => logger.error('original', { message: 'replaced', time: 'then', extra: 1 }));
    expect(JSON.parse(line as string)).toEqual({ time: 'then', level: 'error', message: 'replaced', extra: 1 });
    expect(Object.keys(JSON.parse(line as string) as object)).toEqual(['time', 'level', 'message', 'extra']);
  });
});
