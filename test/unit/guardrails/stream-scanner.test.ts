import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_DETECTORS, detect } from '../../../src/guardrails/detectors.js';
import { denyListDetector } from '../../../src/guardrails/deny-list.js';
import { applyMask, MaskVault, restore, StreamRestorer } from '../../../src/guardrails/masking.js';
import { StreamScanner } from '../../../src/guardrails/stream-scanner.js';
import { writtenCard, writtenIban } from './generators.js';

const DETECTORS = [...Object.values(BUILT_IN_DETECTORS), denyListDetector({ words: ['project falcon', 'classified'] })];

const fragment = fc.oneof(
  fc.constantFrom('the answer is', 'contact', 'jane.doe@example.com', '+44 20 7946 0958', 'from 203.0.113.7', 'project falcon', 'Classified',
    'sk-proj-abcdEFGH1234ijklMNOP5678', 'ssn 123-45-6789', 'version 3.2.1', 'on 2024-03-15', 'and then', '2001:db8::1', '.', ','),
  writtenCard.map((c) => c.written),
  writtenIban.map((i) => i.written),
  fc.string({ maxLength: 30 }),
);
const streamText = fc.array(fragment, { minLength: 1, maxLength: 25 }).map((parts) => parts.join(' '));

/** Split points inside the text: the chunks a stream delivers. */
function chunksOf(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let at = 0;
  for (const p of points) {
    chunks.push(text.slice(at, p));
    at = p;
  }
  chunks.push(text.slice(at));
  return chunks;
}

describe('stream scanner', () => {
  it('masks any chunking of a text exactly as the whole text, and never holds back more than its window', () => {
    fc.assert(
      fc.property(streamText, fc.array(fc.nat(), { maxLength: 40 }), (text, cuts) => {
        const scanner = new StreamScanner(DETECTORS, true);
        let out = '';
        let received = 0;
        for (const chunk of chunksOf(text, cuts)) {
          received += chunk.length;
          out += scanner.push(chunk).text;
          expect(scanner.held).toBeLessThanOrEqual(scanner.window);
          expect(received - scanner.held).toBeGreaterThanOrEqual(0);
        }
        out += scanner.end().text;
        expect(scanner.held).toBe(0);
        expect(out).toBe(applyMask(text, detect(text, DETECTORS)));
      }),
      { numRuns: 500, seed: 38 },
    );
  });

  it('catches a card split across two chunks, and releases text before the window at once', () => {
    const scanner = new StreamScanner(DETECTORS, true);
    const lead = 'x'.repeat(scanner.window + 100);
    const first = scanner.push(`${lead} pay with 4111 1111 `);
    expect(first.text.length).toBeGreaterThanOrEqual(100);
    const rest = scanner.push('1111 1111 today') ;
    const end = scanner.end();
    expect(first.text + rest.text + end.text).toBe(`${lead} pay with [CARD] today`);
    expect([...first.spans, ...rest.spans, ...end.spans].map((s) => s.kind)).toEqual(['card']);
  });

  it('reports span positions in the whole stream', () => {
    const scanner = new StreamScanner(DETECTORS, false);
    const text = 'a'.repeat(500) + ' mail bob@example.org ' + 'b'.repeat(500);
    const spans = [...scanner.push(text.slice(0, 510)).spans, ...scanner.push(text.slice(510)).spans, ...scanner.end().spans];
    expect(spans).toEqual([{ kind: 'email', start: 506, end: 521 }]);
    expect(text.slice(506, 521)).toBe('bob@example.org');
  });
});

describe('reversible masking', () => {
  it('numbers placeholders per kind, reuses one for a repeated value, and restores the originals', () => {
    const vault = new MaskVault();
    const text = 'mail a@example.com and b@example.com, again a@example.com; card 4111111111111111';
    const masked = applyMask(text, detect(text, DETECTORS), vault);
    expect(masked).toBe('mail [EMAIL_1] and [EMAIL_2], again [EMAIL_1]; card [CARD_1]');
    expect(restore('Sent to [EMAIL_2] and [EMAIL_1]; [EMAIL_9] is unknown', vault)).toBe('Sent to b@example.com and a@example.com; [EMAIL_9] is unknown');
  });

  it('restores placeholders split across streamed chunks, holding back only a possible placeholder', () => {
    const vault = new MaskVault();
    applyMask('x a@example.com', detect('x a@example.com', DETECTORS), vault);
    const answer = 'Reply to [EMAIL_1] today [not a placeholder] and [EMAIL_1].';
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 20 }), (cuts) => {
        const restorer = new StreamRestorer(vault);
        let out = '';
        for (const chunk of chunksOf(answer, cuts)) out += restorer.push(chunk);
        out += restorer.end();
        expect(out).toBe('Reply to a@example.com today [not a placeholder] and a@example.com.');
      }),
      { numRuns: 300, seed: 38 },
    );
    const restorer = new StreamRestorer(vault);
    expect(restorer.push('plain text [EMA')).toBe('plain text ');
    expect(restorer.push('IL_1] done')).toBe('a@example.com done');
  });
});
