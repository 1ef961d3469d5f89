/**
 * Failover across the routing pool through every family: each client protocol (OpenAI, Anthropic, Gemini wire) against each upstream kind
 * (OpenAI, Anthropic, Gemini mocks), streaming and not, with a fault injected on the model's primary channel.
 * A fault before the first byte fails over to the backup channel; a stream cut after bytes reached the caller ends
 * with an error event in the caller's format and bills what was delivered. Each case asserts which channels were
 * tried, what the caller received and the usage row.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countTextTokensLocally } from '../../../src/tokenize/count-tokens-locally.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { callChat, channelFor, FAMILIES, handlesLeftOver, openHandles, startUpstream, usageRow, type AnyUpstream, type Family, type UpstreamFault } from './resilience-support.js';

interface Pool {
  model: string;
  primary: AnyUpstream;
  backup: AnyUpstream;
  primaryId: string;
  backupId: string;
}

const PROMPT = 'Please tell me about the grey heron of the river bank in a few words';
/** Stream events before the cut that put at least one text delta in front of every client family. */
const CUT_AFTER: Record<Family, number> = { openai: 3, anthropic: 4, gemini: 2 };
/** Events an upstream sends before its in-band error without saying anything yet (OpenAI's role chunk, Anthropic's message_start). */
const PREAMBLE: Record<Family, number> = { openai: 1, anthropic: 1, gemini: 0 };

type Expectation = 'failover' | 'broken';
interface FaultCase {
  name: string;
  fault: (kind: Family) => UpstreamFault;
  /** What the caller sees, streaming and not. */
  expect: { stream: Expectation; unary: Expectation };
}

const CASES: FaultCase[] = [
  { name: '500', fault: () => ({ kind: 'status', status: 500 }), expect: { stream: 'failover', unary: 'failover' } },
  { name: '503', fault: () => ({ kind: 'status', status: 503 }), expect: { stream: 'failover', unary: 'failover' } },
  { name: '429 with Retry-After', fault: () => ({ kind: 'status', status: 429, headers: { 'retry-after': '1' } }), expect: { stream: 'failover', unary: 'failover' } },
  { name: 'connection reset', fault: () => ({ kind: 'reset' }), expect: { stream: 'failover', unary: 'failover' } },
  { name: 'hang (first-byte timeout)', fault: () => ({ kind: 'delay', ms: 5000 }), expect: { stream: 'failover', unary: 'failover' } },
  { name: 'cut before the first chunk', fault: () => ({ kind: 'cut', after: 0 }), expect: { stream: 'failover', unary: 'failover' } },
  { name: 'in-band error event at the start', fault: (kind) => ({ kind: 'in-band-error', after: PREAMBLE[kind] }), expect: { stream: 'failover', unary: 'failover' } },
  { name: 'cut after K chunks', fault: (kind) => ({ kind: 'cut', after: CUT_AFTER[kind] }), expect: { stream: 'broken', unary: 'failover' } },
];

let gateway: TestGateway;
let account: SeededAccount;
let baseline: Record<string, number>;
const pools = new Map<Family, Pool>();

async function closeAll(): Promise<void> {
  await gateway?.close();
  await Promise.all([...pools.values()].flatMap((pool) => [pool.primary.close(), pool.backup.close()]));
}

beforeAll(async () => {
  baseline = openHandles();
  gateway = await startTestGateway();
  for (const kind of FAMILIES) {
    const model = `matrix-${kind}`;
    const primary = await startUpstream(kind);
    const backup = await startUpstream(kind);
    const { channelId: primaryId } = await addRoutedModel(gateway, {
      model,
      channel: channelFor(primary, `matrix-${kind}-primary`, model, { priority: 10, settings: { first_byte_timeout_ms: 200 } }),
    });
    const backupChannel = await gateway.admin<{ id: string }>('POST', '/admin/channels', channelFor(backup, `matrix-${kind}-backup`, model, { priority: 0 }));
    pools.set(kind, { model, primary, backup, primaryId, backupId: backupChannel.body.id });
  }
  account = await seedAccount(gateway, { balanceUsd: 100 });
});

afterAll(closeAll);

describe.each(FAMILIES)('%s client', (client) => {
  describe.each(FAMILIES)('→ %s upstream', (kind) => {
    const pool = (): Pool => pools.get(kind) as Pool;

    beforeEach(async () => {
      // Each case starts from healthy breakers (a 429 with Retry-After pauses the primary for a second).
      await gateway.admin('POST', `/admin/channels/${pool().primaryId}/health/reset`);
    });

    describe.each([false, true])('stream %s', (stream) => {
      it.each(CASES)('$name', async ({ fault, expect: expectation }) => {
        const { model, primary, backup, primaryId, backupId } = pool();
        const primaryBefore = primary.requests.length;
        const backupBefore = backup.requests.length;
        primary.fault(fault(kind));
        const result = await callChat(gateway, account.key, client, model, PROMPT, stream);
        const row = await usageRow(gateway, account.keyId, result.requestId);
        expect(primary.requests.length - primaryBefore).toBe(1);
        if ((stream ? expectation.stream : expectation.unary) === 'failover') {
          expect(result.status, JSON.stringify(result.error)).toBe(200);
          expect(result.text).toContain('grey heron');
          expect(result.streamError).toBeNull();
          expect(result.completed).toBe(true);
          expect(backup.requests.length - backupBefore).toBe(1);
          expect(row).toMatchObject({ status: 200, error_code: null, attempts: 2, attempted_channels: [primaryId, backupId], channel_id: backupId });
          expect(row!.completion_tokens).toBeGreaterThan(0);
          expect(row!.cost_usd).toBeGreaterThan(0);
        } else {
          // Bytes reached the caller: no retry; the stream ends with an error event in the caller's format.
          expect(result.status).toBe(200);
          expect(result.deltas).toBeGreaterThan(0);
          expect(`Echo: ${PROMPT}`.startsWith(result.text)).toBe(true);
          expect(result.streamError).not.toBeNull();
          expect(JSON.stringify(result.streamError)).not.toContain('127.0.0.1');
          expect(result.completed).toBe(false);
          expect(backup.requests.length - backupBefore).toBe(0);
          expect(row).toMatchObject({ status: 502, error_code: 'upstream_error', attempts: 1, attempted_channels: [primaryId] });
          // Billed for what was delivered: the delivered text counted with the local tokenizer, or the upstream's own
          // running count when it reports one that is higher (Gemini).
          const counted = await countTextTokensLocally(result.text);
          expect(counted).toBeGreaterThan(0);
          if (kind === 'gemini') expect(row!.completion_tokens).toBeGreaterThanOrEqual(counted);
          else expect(row!.completion_tokens).toBe(counted);
          expect(row!.cost_usd).toBeGreaterThan(0);
        }
      });
    });
  });
});

describe('when every channel of the pool fails', () => {
  it.each(FAMILIES)('a %s caller gets 502 upstream_error without upstream details, streaming or not', async (client) => {
    const { model, primary, backup } = pools.get('openai') as Pool;
    for (const stream of [false, true]) {
      primary.fault({ kind: 'status', status: 500 });
      backup.fault({ kind: 'status', status: 503 });
      const result = await callChat(gateway, account.key, client, model, PROMPT, stream);
      expect(result.status).toBe(502);
      expect(JSON.stringify(result.error)).toMatch(/upstream|UNAVAILABLE|api_error|INTERNAL/i);
      expect(JSON.stringify(result.error)).not.toContain('127.0.0.1');
      expect(JSON.stringify(result.error)).not.toContain('sk-upstream');
      const row = await usageRow(gateway, account.keyId, result.requestId);
      expect(row).toMatchObject({ status: 502, error_code: 'upstream_error', attempts: 2, cost_usd: 0 });
      await gateway.admin('POST', `/admin/channels/${(pools.get('openai') as Pool).primaryId}/health/reset`);
      await gateway.admin('POST', `/admin/channels/${(pools.get('openai') as Pool).backupId}/health/reset`);
    }
  });
});

describe('after the run', () => {
  it('leaves no socket, server or timer open (hung upstreams, cut streams and resets included)', async () => {
    await closeAll();
    expect(await handlesLeftOver(baseline)).toEqual({});
  });
});
