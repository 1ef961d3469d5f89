import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lengths, meterFigures } from '../../../scripts/source-shape.js';

describe('source shape figures', () => {
  const root = mkdtempSync(join(tmpdir(), 'source-shape-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): string => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    return join(root, path);
  };
  const meter = write('relay/request-meter.ts', [
    'export class RequestMeter {',
    '  #seen = 0;',
    '  costNano = 0n;',
    '  readonly createdAt = 0;',
    '  get stream(): boolean { return this.#seen > 0; }',
    '  set stream(value: boolean) { this.#seen = value ? 1 : 0; }',
    '  recordAttempt(): void { this.#attempts.push(1); }',
    '  readonly #attempts: number[] = [];',
    '  quote(): bigint { return this.costNano; }',
    '  finish(): bigint { this.#close(); return this.quote(); }',
    '  #close(): void { this.#seen += 1; }',
    '  private helper(): void {}',
    '  static create(): RequestMeter { return new RequestMeter(); }',
    '}',
  ].join('\n'));
  const caller = write('http/route.ts', 'export function route(call: { meter: RequestMeter }): void {\n  call.meter.quote();\n  call.meter.recordAttempt();\n  call.meter.finish();\n}\n');
  const reader = write('relay/reader.ts', 'export function read(meter: RequestMeter): bigint {\n  return meter.quote();\n}\n');
  const assigner = write('relay/assigner.ts', 'export function cost(meter: RequestMeter): void {\n  meter.costNano = 1n;\n  ledger.settle(meter);\n  settle();\n  queue(settle.bind(null, meter));\n}\n');

  it('counts public members once per name and the files that change a meter, not those that only read it', () => {
    const figures = meterFigures([meter, caller, reader, assigner], meter);
    // costNano, createdAt, stream (get and set), recordAttempt, quote, finish; not #seen, #close, helper, create.
    expect(figures.publicMembers).toBe(6);
    // recordAttempt pushes to a field and finish calls #close, which assigns one: both change the meter; quote reads.
    expect(figures.writingFiles).toEqual([caller, assigner].sort());
    expect({ finishSites: figures.finishSites, finishFiles: figures.finishFiles }).toEqual({ finishSites: 1, finishFiles: 1 });
    expect({ settleSites: figures.settleSites, settleFiles: figures.settleFiles }).toEqual({ settleSites: 3, settleFiles: 1 });
  });

  it('still counts the finish and settle call sites once the meter is gone', () => {
    const figures = meterFigures([caller, assigner], join(root, 'relay/no-meter.ts'));
    expect(figures).toEqual({ publicMembers: null, writingFiles: null, finishSites: 1, finishFiles: 1, settleSites: 3, settleFiles: 1 });
  });

  it('lists files over 400 lines and functions over 80 lines, first line to last', () => {
    const body = (lines: number): string => Array.from({ length: lines - 2 }, (_, index) => `  const v${index} = ${index};`).join('\n');
    const long = write('long.ts', `export function long(): void {\n${body(81)}\n}\nexport const short = (): void => {\n${body(80)}\n};\n${'// filler\n'.repeat(240)}`);
    const found = lengths([long, reader]);
    expect(found.longFunctions).toEqual([{ at: `${long.split('\\').join('/')}:1`, name: 'long', lines: 81 }]);
    expect(found.longFiles).toEqual([{ file: long.split('\\').join('/'), lines: 81 + 80 + 240 }]);
  });
});
