import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGuardrailService, type MockGuardrailService, SLOW_ANSWER_MS } from '../../support/mock-guardrail-service.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { rawTableText } from '../../support/raw-table.js';

/**
 * Webhook guardrails over real HTTP: the gateway with the official SDKs in front, mock upstreams behind, and a mock
 * guardrail service answering in Portkey's (`{verdict}`) and LiteLLM's (`{action}`) shapes. A failed check blocks
 * the request before any upstream sees it, or stops the answer (whole or streamed); a guardrail that does not answer
 * in time passes the request when its policy fails open and refuses it when it fails closed; the service's secret
 * header is sealed at rest and reaches only the service. Runs on PostgreSQL when TEST_DATABASE_URL names one.
 */
let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let service: MockGuardrailService;
let account: SeededAccount;
const keys: Record<string, string> = {};
let hookId = '';

const SECRET = 'Bearer grd-service-secret-5f1c';
/** Long enough for a loaded machine to answer a quick guardrail, far shorter than the slow one's delay. */
const TIMEOUT_MS = 1000;

beforeAll(async () => {
  [openaiUpstream, anthropicUpstream, service] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGuardrailService()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'chat-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'chat-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'chat-anthropic': 'claude-sonnet-4-5' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
  const policies = [
    { name: 'hook-closed', kind: 'webhook', mode: 'block', applies_to: 'input', settings: { url: `${service.url}/portkey`, headers: { Authorization: SECRET }, timeout_ms: TIMEOUT_MS } },
    { name: 'hook-open', kind: 'webhook', mode: 'block', applies_to: 'input', settings: { url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS, fail_open: true } },
    { name: 'hook-log', kind: 'webhook', mode: 'log', applies_to: 'input', settings: { url: `${service.url}/litellm`, timeout_ms: TIMEOUT_MS } },
    { name: 'hook-out', kind: 'webhook', mode: 'block', applies_to: 'output', settings: { url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS } },
    { name: 'litellm-in', kind: 'webhook', mode: 'block', applies_to: 'input', settings: { url: `${service.url}/litellm`, timeout_ms: TIMEOUT_MS } },
    { name: 'emails-out', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } },
    { name: 'litellm-out', kind: 'webhook', mode: 'block', applies_to: 'output', settings: { url: `${service.url}/litellm`, timeout_ms: TIMEOUT_MS } },
    { name: 'hook-out-open', kind: 'webhook', mode: 'block', applies_to: 'output', settings: { url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS, fail_open: true } },
  ];
  for (const policy of policies) {
    const created = await gateway.admin<{ id: string }>('POST', '/admin/guardrails', policy);
    expect(created.status).toBe(201);
    if (policy.name === 'hook-closed') hookId = created.body.id;
  }
  const bindings: Record<string, string[]> = {
    closed: ['hook-closed'],
    open: ['hook-open'],
    log: ['hook-log'],
    out: ['emails-out', 'hook-out'],
    litellm: ['litellm-in'],
    litellmOut: ['litellm-out'],
    outOpen: ['hook-out-open'],
  };
  for (const [name, guardrails] of Object.entries(bindings)) {
    const key = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${account.accountId}/keys`, { name, guardrails });
    expect(key.status).toBe(201);
    keys[name] = key.body.key;
  }
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), service?.close()]);
});

const openai = (key: string): OpenAI => new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 });
const ask = (key: string, content: string) => openai(key).chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content }] }).withResponse();

describe('webhook policies in the admin API', () => {
  it('keeps the service\'s headers sealed: listed by name, stored encrypted, kept across a change of other settings', async () => {
    const one = await gateway.admin<{ settings: Record<string, unknown>; header_names: string[] }>('GET', `/admin/guardrails/${hookId}`);
    expect(one.status).toBe(200);
    expect(one.body.header_names).toEqual(['Authorization']);
    expect(one.body.settings).toEqual({ url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS });
    const listed = await gateway.admin('GET', '/admin/guardrails');
    expect(JSON.stringify(listed.body)).not.toContain('grd-service-secret');
    const raw = await rawTableText(gateway.databaseUrl, 'guardrails');
    expect(raw).toContain('hook-closed');
    expect(raw).not.toContain('grd-service-secret');
    // A change that does not name the headers keeps them (they cannot be read back to be sent again).
    const changed = await gateway.admin<{ settings: Record<string, unknown>; header_names: string[] }>('PATCH', `/admin/guardrails/${hookId}`, { settings: { url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS + 1 } });
    expect(changed.status).toBe(200);
    expect(changed.body.header_names).toEqual(['Authorization']);
    await gateway.admin('PATCH', `/admin/guardrails/${hookId}`, { settings: { url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS } });
  });

  it('refuses a webhook that would mask, a URL with credentials, a reserved header and an unknown setting', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'm', kind: 'webhook', mode: 'mask', applies_to: 'input', settings: { url: `${service.url}/portkey` } }, 'mode'],
      [{ name: 'u', kind: 'webhook', mode: 'block', applies_to: 'input', settings: { url: 'http://user:pw@127.0.0.1/x' } }, 'settings.url'],
      [{ name: 'h', kind: 'webhook', mode: 'block', applies_to: 'input', settings: { url: `${service.url}/portkey`, headers: { Host: 'x' } } }, 'settings.headers.Host'],
      [{ name: 'x', kind: 'webhook', mode: 'block', applies_to: 'input', settings: { url: `${service.url}/portkey`, retries: 3 } }, 'settings'],
      [{ name: 'n', kind: 'webhook', mode: 'block', applies_to: 'input' }, 'settings'],
    ];
    for (const [body, param] of cases) {
      const refused = await gateway.admin<{ error: { code: string; param?: string } }>('POST', '/admin/guardrails', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('bad_request');
      expect(refused.body.error.param ?? '', JSON.stringify(body)).toContain(param);
    }
  });
});

describe('an input webhook', () => {
  it('passes a request it approves, shown the request in Portkey\'s shape with its secret header', async () => {
    const before = service.calls.length;
    const { data, response } = await ask(keys.closed as string, 'A calm question about herons');
    expect(data.choices[0]?.message.content).toContain('calm question');
    expect(response.headers.get('x-gateway-guardrails')).toBe('hook-closed/input=passed;0');
    const call = service.calls.at(-1);
    expect(service.calls.length).toBe(before + 1);
    expect(call?.headers.authorization).toBe(SECRET);
    expect(call?.body).toMatchObject({
      eventType: 'beforeRequestHook',
      requestType: 'chatComplete',
      request: { text: 'A calm question about herons', isStreamingRequest: false, json: { model: 'chat-openai', messages: [{ role: 'user', content: 'A calm question about herons' }] } },
      metadata: { guardrail: 'hook-closed' },
    });
  });

  it('refuses a request it fails, before any upstream sees it (OpenAI and Anthropic families)', async () => {
    const before = openaiUpstream.requests.length;
    const error = await ask(keys.closed as string, 'something forbidden').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const failure = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(failure.code).toBe('guardrail_blocked');
    expect(failure.message).toContain("'hook-closed'");
    expect(failure.headers.get('x-gateway-guardrails')).toBe('hook-closed/input=blocked;1');
    expect(openaiUpstream.requests.length).toBe(before);

    const anthropicBefore = anthropicUpstream.requests.length;
    const claude = new Anthropic({ baseURL: gateway.url, apiKey: keys.closed as string, maxRetries: 0 });
    const refused = await claude.messages.create({ model: 'chat-anthropic', max_tokens: 50, messages: [{ role: 'user', content: 'forbidden again' }] }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(((refused as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { code: string } }).error.code).toBe('guardrail_blocked');
    expect(anthropicUpstream.requests.length).toBe(anthropicBefore);
  });

  it('fails closed: a guardrail that does not answer in time refuses the request, after its timeout and not the service\'s delay', async () => {
    const before = openaiUpstream.requests.length;
    const started = Date.now();
    const error = await ask(keys.closed as string, 'slowpoke question').catch((caught: unknown) => caught);
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).headers.get('x-gateway-guardrails')).toBe('hook-closed/input=blocked;1');
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(took).toBeLessThan(SLOW_ANSWER_MS);
    expect(openaiUpstream.requests.length).toBe(before);
    // A fault of the service is no verdict either.
    const broken = await ask(keys.closed as string, 'broken service').catch((caught: unknown) => caught);
    expect(broken).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('fails open: a guardrail that does not answer in time lets the request through, and says so', async () => {
    const started = Date.now();
    const { data, response } = await ask(keys.open as string, 'slowpoke but open');
    expect(Date.now() - started).toBeLessThan(SLOW_ANSWER_MS);
    expect(data.choices[0]?.message.content).toContain('slowpoke but open');
    expect(response.headers.get('x-gateway-guardrails')).toBe('hook-open/input=unavailable;1');
    // A failed check still blocks when the service does answer.
    const error = await ask(keys.open as string, 'forbidden and open').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('reads LiteLLM\'s generic guardrail answer: BLOCKED refuses, NONE passes; a log policy only records', async () => {
    await expect(ask(keys.litellm as string, 'forbidden via litellm')).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const passed = await ask(keys.litellm as string, 'fine via litellm');
    expect(passed.response.headers.get('x-gateway-guardrails')).toBe('litellm-in/input=passed;0');
    const logged = await ask(keys.log as string, 'forbidden but only logged');
    expect(logged.data.choices[0]?.message.content).toContain('only logged');
    expect(logged.response.headers.get('x-gateway-guardrails')).toBe('hook-log/input=logged;1');
  });
});

describe('a guardrail that does not answer in time, in every family', () => {
  /** Each family's request, whole or streamed (drained); resolves to the refusal's text, or 'passed'. */
  const families: Record<string, (key: string, text: string, stream: boolean) => Promise<string>> = {
    'OpenAI chat': async (key, text, stream) => {
      const client = openai(key);
      if (!stream) return client.chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content: text }] }).then(() => 'passed');
      for await (const _chunk of await client.chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: text }] })) {
        // drain until the end or the error event
      }
      return 'passed';
    },
    'OpenAI Responses': async (key, text, stream) => {
      const client = openai(key);
      if (!stream) return client.responses.create({ model: 'chat-openai', input: text }).then(() => 'passed');
      for await (const _event of await client.responses.create({ model: 'chat-openai', stream: true, input: text })) {
        // drain until the end or the error event
      }
      return 'passed';
    },
    'Anthropic messages': async (key, text, stream) => {
      const client = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
      const request = { model: 'chat-anthropic', max_tokens: 100, messages: [{ role: 'user' as const, content: text }] };
      await (stream ? client.messages.stream(request).finalMessage() : client.messages.create(request));
      return 'passed';
    },
    'Gemini generateContent': async (key, text, stream) => {
      const client = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
      if (!stream) return client.models.generateContent({ model: 'chat-openai', contents: text }).then(() => 'passed');
      for await (const _chunk of await client.models.generateContentStream({ model: 'chat-openai', contents: text })) {
        // drain until the end or the error
      }
      return 'passed';
    },
  };
  const outcome = (send: Promise<string>): Promise<string> => send.catch((error: unknown) => String(error instanceof Error ? error.message : error));

  for (const [family, send] of Object.entries(families)) {
    it(`${family}: on input fail closed refuses and fail open passes; on output, whole and streamed, likewise`, async () => {
      const before = openaiUpstream.requests.length + anthropicUpstream.requests.length;
      const closed = await outcome(send(keys.closed as string, 'slowpoke question', false));
      expect(closed).toContain('hook-closed');
      expect(openaiUpstream.requests.length + anthropicUpstream.requests.length).toBe(before);
      expect(await outcome(send(keys.open as string, 'slowpoke but open', false))).toBe('passed');
      for (const stream of [false, true]) {
        // The mock upstreams echo the prompt: the answer carries the word that makes the service slow.
        const started = Date.now();
        expect(await outcome(send(keys.out as string, 'slowpoke answer', stream)), `closed, stream ${stream}`).toContain('hook-out');
        expect(Date.now() - started).toBeLessThan(SLOW_ANSWER_MS);
        expect(await outcome(send(keys.outOpen as string, 'slowpoke answer', stream)), `open, stream ${stream}`).toBe('passed');
      }
    });
  }
});

describe('a LiteLLM guardrail that rewrites the text', () => {
  it('is shown the text parts one by one, and its rewrite is what the upstream sees (OpenAI and Anthropic families)', async () => {
    const { data, response } = await ask(keys.litellm as string, 'The codename heron stays between us');
    const call = service.calls.at(-1);
    expect(call?.body).toMatchObject({ input_type: 'request', texts: ['The codename heron stays between us'], structured_messages: [{ role: 'user', content: 'The codename heron stays between us' }] });
    expect(JSON.stringify(openaiUpstream.requests.at(-1)?.body)).not.toContain('heron');
    expect(JSON.stringify(openaiUpstream.requests.at(-1)?.body)).toContain('codename [REDACTED] stays between us');
    expect(data.choices[0]?.message.content).toContain('[REDACTED]');
    expect(response.headers.get('x-gateway-guardrails')).toBe('litellm-in/input=masked;1');

    const claude = new Anthropic({ baseURL: gateway.url, apiKey: keys.litellm as string, maxRetries: 0 });
    const { response: claudeResponse } = await claude.messages.create({ model: 'chat-anthropic', max_tokens: 100, system: 'Keep the codename osprey quiet', messages: [{ role: 'user', content: 'Plain question' }, { role: 'assistant', content: 'Sure' }, { role: 'user', content: 'And the codename kestrel?' }] }).withResponse();
    expect(service.calls.at(-1)?.body.texts).toEqual(['Keep the codename osprey quiet', 'Plain question', 'Sure', 'And the codename kestrel?']);
    const seen = JSON.stringify(anthropicUpstream.requests.at(-1)?.body);
    expect(seen).not.toMatch(/osprey|kestrel/);
    expect(seen).toContain('Plain question');
    expect(claudeResponse.headers.get('x-gateway-guardrails')).toBe('litellm-in/input=masked;2');
  });

  it('a log policy counts the rewrite and leaves the text; a rewrite of the wrong number of texts is no verdict', async () => {
    const logged = await ask(keys.log as string, 'The codename heron, logged');
    expect(JSON.stringify(openaiUpstream.requests.at(-1)?.body)).toContain('codename heron, logged');
    expect(logged.response.headers.get('x-gateway-guardrails')).toBe('hook-log/input=logged;1');
    const before = openaiUpstream.requests.length;
    const error = await ask(keys.litellm as string, 'a miscount please').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).headers.get('x-gateway-guardrails')).toBe('litellm-in/input=blocked;1');
    expect(openaiUpstream.requests.length).toBe(before);
  });

  it('rewrites a whole answer, and stops a streamed one it would rewrite (its text already delivered)', async () => {
    const { data, response } = await ask(keys.litellmOut as string, 'Repeat: the codename heron');
    expect(JSON.stringify(openaiUpstream.requests.at(-1)?.body)).toContain('codename heron');
    expect(service.calls.at(-1)?.body).toMatchObject({ input_type: 'response', eventType: 'afterRequestHook' });
    expect(data.choices[0]?.message.content).toContain('codename [REDACTED]');
    expect(data.choices[0]?.message.content).not.toContain('heron');
    expect(response.headers.get('x-gateway-guardrails')).toBe('litellm-out/output=masked;1');

    const stream = await openai(keys.litellmOut as string).chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: 'Stream: the codename heron' }] });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // drain until the error event
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain('litellm-out');
  });
});

describe('an output webhook', () => {
  it('is shown the answer after the built-in masking, and stops an answer it fails', async () => {
    const { data } = await ask(keys.out as string, 'Reply to cy@example.net kindly');
    expect(data.choices[0]?.message.content).toContain('[EMAIL]');
    const call = service.calls.at(-1);
    expect(call?.body.eventType).toBe('afterRequestHook');
    expect(call?.body.response.text).toContain('[EMAIL]');
    // The request's own text is what the upstream saw (no input policy masks it); the answer's is masked.
    expect(JSON.stringify(call?.body.response)).not.toContain('cy@example.net');
    const error = await ask(keys.out as string, 'say forbidden').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain("'hook-out'");
  });

  it('checks a streamed answer once complete: one that passes ends normally, one that fails ends with the error event', async () => {
    const client = openai(keys.out as string);
    let text = '';
    for await (const chunk of await client.chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: 'a gentle streamed reply' }] })) {
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toContain('gentle streamed reply');
    const call = service.calls.at(-1);
    expect(call?.body).toMatchObject({ eventType: 'afterRequestHook', request: { isStreamingRequest: true } });
    expect(call?.body.response.text).toBe(text);
    const stream = await client.chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: 'a streamed forbidden reply' }] });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // drain until the error event
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain('hook-out');
  });

  it('the usage rows say what each webhook did', async () => {
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ error_code: string | null; guardrails: Array<{ name: string; direction: string; outcome: string; count: number }> }> }>('GET', `/admin/usage?account_id=${account.accountId}&limit=200`);
    const hits = usage.body.data.flatMap((row) => row.guardrails);
    expect(hits).toContainEqual({ name: 'hook-open', direction: 'input', outcome: 'unavailable', count: 1 });
    expect(hits).toContainEqual({ name: 'hook-closed', direction: 'input', outcome: 'blocked', count: 1 });
    expect(hits).toContainEqual({ name: 'hook-out', direction: 'output', outcome: 'blocked', count: 1 });
    expect(hits).toContainEqual({ name: 'hook-log', direction: 'input', outcome: 'logged', count: 1 });
    expect(hits).toContainEqual({ name: 'hook-out-open', direction: 'output', outcome: 'unavailable', count: 1 });
    expect(JSON.stringify(usage.body)).not.toContain('forbidden');
  });
});
