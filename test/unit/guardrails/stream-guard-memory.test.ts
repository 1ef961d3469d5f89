import { describe, expect, it } from 'vitest';
import type { GuardrailUsage } from '../../../src/domain/usage-records.js';
import { RequestGuard } from '../../../src/guardrail-policies/request-guard.js';
import { StreamGuard } from '../../../src/guardrail-policies/stream-guard.js';
import { WebhookGuardrailCaller } from '../../../src/guardrail-policies/webhook-guardrail.js';
import { GuardrailSet } from '../../../src/guardrails/policy.js';
import type { GuardrailPolicy } from '../../../src/guardrails/settings.js';
import { StreamScanner } from '../../../src/guardrails/stream-scanner.js';
import { TALLY_BATCH_CHARS } from '../../../src/guardrails/stream-tally.js';
import { BUILT_IN_DETECTORS } from '../../../src/guardrails/detectors.js';
import { denyListDetector } from '../../../src/guardrails/deny-list.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';

/**
 * The stream guard's memory is bounded by its policies, not by the answer: a streamed answer of megabytes (text and
 * reasoning side by side, with matches throughout) is masked and counted while what the guard keeps between chunks
 * stays under a cap derived from its scanners, and the summary counts every match as a check of the whole text would.
 */
const policies: GuardrailPolicy[] = [
  { name: 'emails', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } },
  { name: 'sparrows', kind: 'deny_list', mode: 'log', applies_to: 'output', settings: { words: ['sparrow'] } },
  { name: 'no-heron', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['heron'] } },
];

/** One chunk of about a kilobyte: ordinary words, an address to mask, a logged word (cut anywhere by the chunking). */
const PIECE = `${'the quick brown fox jumps over the lazy dog '.repeat(20)}write to ann@example.com about the sparrow `;
const CHUNK = 997;

async function* longAnswer(bytesPerLane: number): AsyncIterable<StreamPart> {
  const text = PIECE.repeat(Math.ceil(bytesPerLane / PIECE.length));
  yield { type: 'reasoning-start', id: 'r' };
  yield { type: 'text-start', id: 't' };
  for (let at = 0; at < text.length; at += CHUNK) {
    yield { type: 'reasoning-delta', id: 'r', delta: text.slice(at, at + CHUNK) };
    yield { type: 'text-delta', id: 't', delta: text.slice(at, at + CHUNK) };
  }
  yield { type: 'reasoning-end', id: 'r', signature: 'sig' };
  yield { type: 'text-end', id: 't' };
  yield { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: null } as StreamPart;
}

describe('stream guard memory', () => {
  it('keeps at most its scanners\' windows between chunks of a 4 MB answer, and counts every match', async () => {
    const usage: GuardrailUsage[] = [];
    const host = new RequestGuard({ set: new GuardrailSet(policies), policies }, usage, { model: 'm', stream: true, webhooks: new WebhookGuardrailCaller(), moderate: () => Promise.resolve({ kind: 'passed' as const }) });
    expect(host.checksAnswer).toBe(false);
    const guard = new StreamGuard(host);
    const bytesPerLane = 2 * 1024 * 1024;
    const pieces = Math.ceil(bytesPerLane / PIECE.length);

    // Per block: the output scanner (email, sparrow is log-only so not in it, heron) and the tally's scanner per
    // policy, each at most window + look-behind, and the tally's batch (less than TALLY_BATCH_CHARS between chunks;
    // a chunk is read once it fills it); plus the text received but not yet sent (the output scanner's held part).
    const cap = (detectors: ConstructorParameters<typeof StreamScanner>[0]): number => new StreamScanner(detectors, false).cap;
    const heron = denyListDetector({ words: ['heron'] });
    const sparrow = denyListDetector({ words: ['sparrow'] });
    const outputScanner = cap([BUILT_IN_DETECTORS.email, heron]);
    const perBlock = outputScanner + cap([BUILT_IN_DETECTORS.email]) + cap([sparrow]) + cap([heron]) + TALLY_BATCH_CHARS + outputScanner;
    const bound = 2 * perBlock;

    let most = 0;
    let received = 0;
    let emails = 0;
    for await (const part of guard.run(longAnswer(bytesPerLane))) {
      most = Math.max(most, guard.held);
      if (part.type === 'text-delta' || part.type === 'reasoning-delta') {
        received += part.delta.length;
        emails += part.delta.split('[EMAIL]').length - 1;
      }
    }
    // Every byte of both blocks was delivered (each address shortened to its placeholder).
    expect(received).toBe(2 * pieces * (PIECE.length - 'ann@example.com'.length + '[EMAIL]'.length));
    expect(2 * pieces * PIECE.length).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(bound);
    expect(bound).toBeLessThan(8192);
    expect(guard.held).toBe(0);
    expect(emails).toBe(2 * pieces);
    // Counted as a check of the whole text would: every address masked, every sparrow logged, no heron.
    expect(usage).toEqual([
      { name: 'emails', direction: 'output', outcome: 'masked', count: 2 * pieces },
      { name: 'sparrows', direction: 'output', outcome: 'logged', count: 2 * pieces },
      { name: 'no-heron', direction: 'output', outcome: 'passed', count: 0 },
    ]);
  });

  it('a stream scanner keeps at most its window and look-behind, however long the stream', () => {
    const scanner = new StreamScanner([BUILT_IN_DETECTORS.email, BUILT_IN_DETECTORS.card], true);
    let most = 0;
    for (let index = 0; index < 4000; index++) {
      scanner.push(`${'lorem ipsum dolor sit amet '.repeat(36)} card 4111 1111 1111 1111 to bo`);
      most = Math.max(most, scanner.retained);
      expect(scanner.held).toBeLessThanOrEqual(scanner.window);
    }
    expect(most).toBeLessThanOrEqual(scanner.cap);
    expect(scanner.cap).toBe(scanner.window + 64);
  });
});
