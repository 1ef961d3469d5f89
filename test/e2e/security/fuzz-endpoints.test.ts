/**
 * Property-based fuzzing of every endpoint family, seeded and bounded in time: malformed bodies of every kind
 * (wrong types, random shapes, deep nesting, truncation, odd encodings, oversized) against real listeners and
 * mock upstreams. Every request is answered, never with a 5xx, and every error is the spec's object in the
 * family's own shape. FUZZ_MS (per family, default 3000), FUZZ_CONCURRENCY (default 4) and FUZZ_SEED run it longer or differently.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { familyErrorProblem, familyOfPath } from '../../support/family-error.js';
import { requestArbitrary, sweepRequests, type Endpoint, type FuzzRequest } from '../../support/fuzz-requests.js';
import { seedAccount, type SeededAccount } from '../../support/gateway-harness.js';
import { startMediaSetup, type MediaSetup } from '../media/media-support.js';

const FUZZ_MS = Number(process.env.FUZZ_MS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 4);
const MAX_BODY_BYTES = 256 * 1024;
/** Each family must get at least this many requests in its time, or the run proves little. */
const MIN_REQUESTS = 40;

const chat = { model: 'chat-openai', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 };
const messages = { model: 'chat-anthropic', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [{ name: 'f', input_schema: { type: 'object', properties: { a: { type: 'string' } } } }] };
const contents = {
  contents: [
    { role: 'user', parts: [{ text: 'hi' }] },
    { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 'x' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'f', response: { result: { a: 1 } } } }] },
  ], generationConfig: { maxOutputTokens: 8 }, tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } }] }] };

function families(ids: { accountId: string; keyId: string; channelId: string }): Record<string, Endpoint[]> {
  return {
    'chat-completions': [
      { method: 'POST', path: '/v1/chat/completions', skeleton: chat, auth: 'bearer' },
      { method: 'POST', path: '/v1/chat/completions', skeleton: { ...chat, model: 'chat-anthropic', stream: true }, auth: 'bearer' },
      { method: 'POST', path: '/v1/chat/completions', skeleton: { ...chat, model: 'chat-gemini', tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] }, auth: 'bearer' },
      { method: 'POST', path: '/v1/responses', skeleton: { model: 'chat-openai', input: 'hi', max_output_tokens: 16 }, auth: 'bearer' },
      { method: 'POST', path: '/v1/responses', skeleton: { model: 'chat-gemini', input: [{ role: 'user', content: 'hi' }] }, auth: 'bearer' },
      { method: 'POST', path: '/v1/responses/input_tokens', skeleton: { model: 'chat-openai', input: 'hi' }, auth: 'bearer' },
      { method: 'POST', path: '/v1/embeddings', skeleton: { model: 'embed-openai', input: 'hi' }, auth: 'bearer' },
      { method: 'POST', path: '/v1/embeddings', skeleton: { model: 'embed-gemini', input: ['a', 'b'] }, auth: 'bearer' },
      { method: 'POST', path: '/v1/images/generations', skeleton: { model: 'dalle-3', prompt: 'a cat', n: 1 }, auth: 'bearer' },
      { method: 'POST', path: '/v1/images/edits', skeleton: { model: 'dalle-2', prompt: 'a cat' }, auth: 'bearer' },
      { method: 'POST', path: '/v1/audio/transcriptions', skeleton: { model: 'whisper' }, auth: 'bearer' },
      { method: 'POST', path: '/v1/audio/speech', skeleton: { model: 'tts-1', input: 'hi', voice: 'alloy' }, auth: 'bearer' },
      { method: 'POST', path: '/v1/moderations', skeleton: { model: 'omni-moderation-latest', input: 'hi' }, auth: 'bearer' },
      { method: 'POST', path: '/v1/dashboard/billing/redeem', skeleton: { code: 'ABCD-EFGH' }, auth: 'bearer' },
      { method: 'GET', path: '/v1/models', skeleton: null, auth: 'bearer' },
      { method: 'GET', path: '/v1/models/chat-openai', skeleton: null, auth: 'bearer' },
      { method: 'GET', path: '/v1/dashboard/billing/credit_grants', skeleton: null, auth: 'bearer' },
      { method: 'GET', path: '/v1/responses/resp_x', skeleton: null, auth: 'bearer' },
    ],
    messages: [
      { method: 'POST', path: '/v1/messages', skeleton: messages, auth: 'x-api-key' },
      { method: 'POST', path: '/v1/messages', skeleton: { ...messages, model: 'chat-openai', stream: true }, auth: 'x-api-key' },
      { method: 'POST', path: '/v1/messages', skeleton: { ...messages, model: 'chat-gemini' }, auth: 'x-api-key' },
      { method: 'POST', path: '/v1/messages/count_tokens', skeleton: { model: 'chat-anthropic', messages: messages.messages }, auth: 'x-api-key' },
      { method: 'POST', path: '/v1/messages/batches', skeleton: { requests: [{ custom_id: 'a', params: { ...messages, model: 'chat-openai' } }] }, auth: 'x-api-key' },
      { method: 'GET', path: '/v1/messages/batches', skeleton: null, auth: 'x-api-key' },
      { method: 'GET', path: '/v1/messages/batches/msgbatch_x', skeleton: null, auth: 'x-api-key' },
      { method: 'GET', path: '/v1/messages/batches/msgbatch_x/results', skeleton: null, auth: 'x-api-key' },
    ],
    'generative-content': [
      { method: 'POST', path: '/v1beta/models/chat-gemini:generateContent', skeleton: contents, auth: 'x-goog-api-key' },
      { method: 'POST', path: '/v1beta/models/chat-gemini:streamGenerateContent', skeleton: contents, auth: 'x-goog-api-key' },
      { method: 'POST', path: '/v1/models/chat-openai:generateContent', skeleton: contents, auth: 'x-goog-api-key' },
      { method: 'POST', path: '/v1beta/models/chat-anthropic:streamGenerateContent', skeleton: contents, auth: 'x-goog-api-key' },
      { method: 'POST', path: '/v1beta/models/chat-gemini:countTokens', skeleton: { contents: contents.contents }, auth: 'x-goog-api-key' },
      { method: 'POST', path: '/v1beta/models/embed-gemini:embedContent', skeleton: { content: { parts: [{ text: 'hi' }] } }, auth: 'x-goog-api-key' },
      { method: 'POST', path: '/v1beta/models/embed-gemini:batchEmbedContents', skeleton: { requests: [{ model: 'models/embed-gemini', content: { parts: [{ text: 'hi' }] } }] }, auth: 'x-goog-api-key' },
      { method: 'GET', path: '/v1beta/models', skeleton: null, auth: 'x-goog-api-key' },
      { method: 'GET', path: '/v1beta/models/chat-gemini', skeleton: null, auth: 'x-goog-api-key' },
    ],
    admin: [
      { method: 'POST', path: '/admin/channels', skeleton: { name: 'fuzz', type: 'simulator', models: ['chat-openai'], priority: 0, weight: 0, enabled: false }, auth: 'admin' },
      { method: 'PATCH', path: `/admin/channels/${ids.channelId}`, skeleton: { settings: { output_tokens: 3 }, weight: 1 }, auth: 'admin' },
      { method: 'POST', path: '/admin/models', skeleton: { id: 'fuzz-model', kind: 'chat', pricing: { input_per_mtok: 1 }, limits: { rpm: 5, tpm: 100 } }, auth: 'admin' },
      { method: 'PATCH', path: '/admin/models/fuzz-target', skeleton: { public: true, pricing: { input_per_mtok: 2 }, limits: { tpm: 1000 } }, auth: 'admin' },
      { method: 'POST', path: '/admin/accounts', skeleton: { email: 'fuzz@example.com', password: 'correct horse', tier: 'default' }, auth: 'admin' },
      { method: 'PATCH', path: `/admin/accounts/${ids.accountId}`, skeleton: { credit_line_usd: 1, alert_balance_usd: 2 }, auth: 'admin' },
      { method: 'POST', path: `/admin/accounts/${ids.accountId}/credits`, skeleton: { amount_usd: 1, reason: 'fuzz' }, auth: 'admin' },
      { method: 'POST', path: `/admin/accounts/${ids.accountId}/keys`, skeleton: { name: 'k', quota_usd: 1, allowed_models: ['a'], ip_allowlist: ['10.0.0.0/8'], expires_at: 4102444800, rpm: 1, tpm: 1, concurrency: 1 }, auth: 'admin' },
      { method: 'PATCH', path: `/admin/keys/${ids.keyId}`, skeleton: { status: 'disabled', tpm: 5 }, auth: 'admin' },
      { method: 'POST', path: '/admin/plans', skeleton: { name: 'p', period: 'month', quota_usd: 5, overage: { policy: 'limit', limit_usd: 1 }, rpm: 1 }, auth: 'admin' },
      { method: 'POST', path: `/admin/accounts/${ids.accountId}/subscriptions`, skeleton: { plan_id: 'plan_missing' }, auth: 'admin' },
      { method: 'POST', path: '/admin/announcements', skeleton: { title: 't', body: 'b', level: 'info', published_at: 0 }, auth: 'admin' },
      { method: 'PUT', path: '/admin/fx', skeleton: { rates: { JPY: 150, EUR: 0.9 }, as_of: 1700000000 }, auth: 'admin' },
      { method: 'POST', path: `/admin/channels/${ids.channelId}/test`, skeleton: { model: 'chat-openai' }, auth: 'admin' },
      { method: 'GET', path: '/admin/usage', skeleton: null, auth: 'admin' },
      { method: 'GET', path: `/admin/accounts/${ids.accountId}/ledger`, skeleton: null, auth: 'admin' },
    ],
  };
}

interface Finding {
  request: string;
  problem: string;
}

function describeRequest(request: FuzzRequest): string {
  const body = request.body === null ? 'no body' : `${request.body.length} bytes ${JSON.stringify(Buffer.from(request.body.slice(0, 160)).toString('latin1'))}`;
  return `${request.method} ${request.url.slice(0, 120)} [${request.mutation}] ${request.headers['content-type'] ?? ''} ${body}`;
}

async function exercise(baseUrl: string, request: FuzzRequest): Promise<string | null> {
  let response: Response;
  try {
    response = await fetch(baseUrl + request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === null ? {} : { body: request.body }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    return `no HTTP answer: ${error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause)}` : String(error)}`;
  }
  const text = await response.text().catch((error: unknown) => `__body failed: ${String(error)}`);
  if (response.status >= 500) return `answered ${response.status}: ${text.slice(0, 300)}`;
  if (response.status >= 400) {
    const family = request.endpoint.path.startsWith('/admin/') ? 'openai' : familyOfPath(request.endpoint.path);
    const problem = familyErrorProblem(family, text);
    if (problem !== null) return `${response.status} without the ${family} error object: ${problem}`;
    if (response.status === 429 && response.headers.get('retry-after') === null) return '429 without Retry-After';
  }
  return null;
}

describe('fuzzing every endpoint family', () => {
  let setup: MediaSetup;
  let anthropic: MockAnthropicUpstream;
  let account: SeededAccount;
  let target: SeededAccount;
  let channelId = '';
  const counts: Record<string, number> = {};

  beforeAll(async () => {
    setup = await startMediaSetup({ MAX_BODY_BYTES: String(MAX_BODY_BYTES), PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' });
    anthropic = await startMockAnthropicUpstream({ recordRequests: false });
    const { gateway } = setup;
    for (const [id, channel] of [
      ['chat-anthropic', { name: 'anthropic', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'chat-anthropic': 'claude-sonnet-4-5' } }],
      ['chat-gemini', { name: 'gemini-chat', type: 'gemini', base_url: setup.gemini.url, api_key: 'gemini-upstream-test', models: { 'chat-gemini': 'gemini-2.5-flash' } }],
    ] as const) {
      expect((await gateway.admin('POST', '/admin/models', { id, pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
      expect((await gateway.admin('POST', '/admin/channels', channel)).status).toBe(201);
    }
    expect((await gateway.admin('POST', '/admin/models', { id: 'fuzz-target', pricing: { input_per_mtok: 1 } })).status).toBe(201);
    channelId = (await gateway.admin<{ id: string }>('POST', '/admin/channels', { name: 'fuzz-target', type: 'simulator', models: ['fuzz-target'] })).body.id;
    await gateway.gateway.services.catalog.reload();
    account = await seedAccount(gateway, { balanceUsd: 1000 });
    // The admin family mutates its own account and key, never the ones the other families call with.
    target = await seedAccount(gateway, { balanceUsd: 1 });
  }, 60_000);

  afterAll(async () => {
    console.log(`fuzzed requests per family (seed ${SEED}, ${FUZZ_MS} ms each): ${JSON.stringify(counts)}`);
    await setup?.close();
    await anthropic?.close();
  });

  for (const family of ['chat-completions', 'messages', 'generative-content', 'admin']) {
    it(`${family}: every request answered, never 5xx, every error in the family's shape`, async () => {
      const endpoints = families({ accountId: target.accountId, keyId: target.keyId, channelId })[family] as Endpoint[];
      const arbitrary = requestArbitrary(endpoints, { key: account.key, adminToken: setup.gateway.adminToken }, MAX_BODY_BYTES);
      const findings: Finding[] = [];
      // First the sweep of known attack classes over every endpoint (all of it), then requests drawn in seeded
      // chunks, sent by CONCURRENCY callers until the time is up and at least MIN_REQUESTS drawn ones went (a slow
      // machine takes longer rather than proving less; the test's timeout bounds it).
      const sweep = sweepRequests(endpoints, { key: account.key, adminToken: setup.gateway.adminToken }, MAX_BODY_BYTES);
      const queue: FuzzRequest[] = [...sweep];
      let chunk = 0;
      const next = (): FuzzRequest => {
        if (queue.length === 0) queue.push(...fc.sample(arbitrary, { seed: SEED + family.length * 1_000_003 + chunk++, numRuns: 64 }));
        return queue.shift() as FuzzRequest;
      };
      let sent = 0;
      const deadline = performance.now() + FUZZ_MS;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < deadline || sent < sweep.length + MIN_REQUESTS) {
          const request = next();
          sent += 1;
          const problem = await exercise(setup.gateway.url, request);
          if (problem !== null) findings.push({ request: describeRequest(request), problem });
        }
      }));
      counts[family] = sent;
      expect(findings.slice(0, 8), `${findings.length} of ${sent} fuzzed requests went wrong`).toEqual([]);
      expect(sent).toBeGreaterThanOrEqual(sweep.length + MIN_REQUESTS);
    }, FUZZ_MS + 120_000);
  }
});
