import { describe, expect, it } from 'vitest';
import type { GuardrailUsage } from '../../../src/domain/usage-records.js';
import { RequestGuard } from '../../../src/guardrail-policies/request-guard.js';
import { GuardrailSet } from '../../../src/guardrails/policy.js';
import type { GuardrailPolicy } from '../../../src/guardrails/settings.js';
import type { ChatRequest } from '../../../src/ir/chat-request.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';
import type { ChatResponse } from '../../../src/ir/chat-response.js';
import { WebhookGuardrailCaller } from '../../../src/guardrail-policies/webhook-guardrail.js';

const webhooks = new WebhookGuardrailCaller();

function guardOf(policies: GuardrailPolicy[], usage: GuardrailUsage[] = []): RequestGuard {
  return new RequestGuard({ set: new GuardrailSet(policies), policies }, usage, { model: 'm', stream: false, webhooks, moderate: () => Promise.resolve({ kind: 'passed' as const }) });
}

async function* partsOf(chunks: readonly string[]): AsyncIterable<StreamPart> {
  yield { type: 'text-start', id: 't' };
  for (const delta of chunks) yield { type: 'text-delta', id: 't', delta };
  yield { type: 'text-end', id: 't' };
  yield { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: null } as StreamPart;
}

async function textOf(parts: AsyncIterable<StreamPart>): Promise<string> {
  let text = '';
  for await (const part of parts) if (part.type === 'text-delta') text += part.delta;
  return text;
}

const chat = (text: string): ChatRequest => ({ model: 'm', system: [], messages: [{ role: 'user', content: [{ type: 'text', text }] }], warnings: [] }) as unknown as ChatRequest;

describe('RequestGuard', () => {
  it('masks a card reversibly in the request and restores it in a stream whose chunks split the placeholder', async () => {
    const usage: GuardrailUsage[] = [];
    const guard = guardOf([{ name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'], reversible: true } }], usage);
    const request = chat('pay 4111 1111 1111 1111 now');
    await guard.checkInput(request);
    expect(JSON.stringify(request)).not.toContain('4111');
    expect(JSON.stringify(request)).toContain('[CARD_1]');
    expect(usage).toEqual([{ name: 'cards', direction: 'input', outcome: 'masked', count: 1 }]);
    expect(await textOf(guard.guardStream(partsOf(['Echo: pay [CA', 'RD_', '1] now'])))).toBe('Echo: pay 4111 1111 1111 1111 now');
  });

  it('stops a stream on a denied word that straddles two chunks, never sending it', async () => {
    const usage: GuardrailUsage[] = [];
    const guard = guardOf([{ name: 'no-heron', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['heron'] } }], usage);
    let sent = '';
    const error = await (async () => {
      for await (const part of guard.guardStream(partsOf(['a grey he', 'ron stands']))) if (part.type === 'text-delta') sent += part.delta;
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'guardrail_blocked', status: 400 });
    expect((error as Error).message).toContain("'no-heron'");
    expect(sent).not.toContain('heron');
    expect(usage).toContainEqual({ name: 'no-heron', direction: 'output', outcome: 'blocked', count: 1 });
  });

  it('reads the arguments of an earlier turn\'s tool call in the request: masks inside their JSON, and blocks', async () => {
    const masking = guardOf([{ name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'], reversible: true } }]);
    const request = {
      model: 'm', system: [], warnings: [],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'charge it' }] },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 'charge', argumentsJson: '{"card":"4111 1111 1111 1111"}' }] },
      ],
    } as unknown as ChatRequest;
    await masking.checkInput(request);
    expect(JSON.stringify(request)).not.toContain('4111');
    const call = request.messages[1]?.content[0] as { argumentsJson: string };
    expect(JSON.parse(call.argumentsJson)).toEqual({ card: '[CARD_1]' });
    const blocking = guardOf([{ name: 'deny', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] } }]);
    (request.messages[1]?.content[0] as { argumentsJson: string }).argumentsJson = '{"to":"Zanzibar"}';
    await expect(blocking.checkInput(request)).rejects.toMatchObject({ code: 'guardrail_blocked' });
  });

  it('refuses a request with a denied word, naming the policy and not the text', async () => {
    const guard = guardOf([{ name: 'deny', kind: 'deny_list', mode: 'block', applies_to: 'both', settings: { words: ['zanzibar'] } }]);
    const error = await guard.checkInput(chat('about Zanzibar')).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain("'deny'");
    expect((error as Error).message.toLowerCase()).not.toContain('zanzibar');
    expect((error as { headers: Record<string, string> }).headers['x-gateway-guardrails']).toBe('deny/input=blocked;1');
  });

  it('reads reasoning too: masks it in a whole answer and drops the signature its changed text no longer matches', async () => {
    const usage: GuardrailUsage[] = [];
    const guard = guardOf([{ name: 'emails', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } }], usage);
    const answer = {
      content: [
        { type: 'reasoning', text: 'The user is ann@example.com, so…', signature: 'sig-1' },
        { type: 'reasoning', text: 'nothing personal here', signature: 'sig-2' },
        { type: 'text', text: 'Done.' },
      ],
    } as unknown as ChatResponse;
    await guard.checkAnswer(answer);
    expect(answer.content[0]).toEqual({ type: 'reasoning', text: 'The user is [EMAIL], so…' });
    expect(answer.content[1]).toEqual({ type: 'reasoning', text: 'nothing personal here', signature: 'sig-2' });
    expect(usage).toEqual([{ name: 'emails', direction: 'output', outcome: 'masked', count: 1 }]);
  });

  it('stops a stream on a denied word in its reasoning, split across chunks, before the text starts', async () => {
    const usage: GuardrailUsage[] = [];
    const guard = guardOf([{ name: 'no-heron', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['heron'] } }], usage);
    async function* parts(): AsyncIterable<StreamPart> {
      yield { type: 'reasoning-start', id: 'r' };
      for (const delta of ['thinking of a he', 'ron by the lake']) yield { type: 'reasoning-delta', id: 'r', delta };
      yield { type: 'reasoning-end', id: 'r', signature: 's' };
      yield { type: 'text-start', id: 't' };
      yield { type: 'text-delta', id: 't', delta: 'A bird.' };
      yield { type: 'text-end', id: 't' };
    }
    let sent = '';
    const error = await (async () => {
      for await (const part of guard.guardStream(parts())) if (part.type === 'reasoning-delta' || part.type === 'text-delta') sent += part.delta;
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'guardrail_blocked' });
    expect(sent).not.toContain('heron');
    expect(sent).not.toContain('A bird');
    expect(usage).toContainEqual({ name: 'no-heron', direction: 'output', outcome: 'blocked', count: 1 });
  });

  it('masks streamed reasoning and sends its end without the stale signature', async () => {
    const guard = guardOf([{ name: 'emails', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } }]);
    async function* parts(): AsyncIterable<StreamPart> {
      yield { type: 'reasoning-start', id: 'r' };
      for (const delta of ['write to ann@exa', 'mple.com today']) yield { type: 'reasoning-delta', id: 'r', delta };
      yield { type: 'reasoning-end', id: 'r', signature: 's' };
      yield { type: 'reasoning-start', id: 'r2' };
      yield { type: 'reasoning-delta', id: 'r2', delta: 'plain' };
      yield { type: 'reasoning-end', id: 'r2', signature: 's2' };
      yield { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: null } as StreamPart;
    }
    let reasoning = '';
    const ends: StreamPart[] = [];
    for await (const part of guard.guardStream(parts())) {
      if (part.type === 'reasoning-delta') reasoning += part.delta;
      if (part.type === 'reasoning-end') ends.push(part);
    }
    expect(reasoning).toBe('write to [EMAIL] todayplain');
    expect(ends).toEqual([{ type: 'reasoning-end', id: 'r' }, { type: 'reasoning-end', id: 'r2', signature: 's2' }]);
  });

  it('reads a whole answer\'s tool-call arguments: masks inside their JSON strings, and blocks on a denied word', async () => {
    const usage: GuardrailUsage[] = [];
    const masking = guardOf([{ name: 'emails', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } }], usage);
    const answer = {
      content: [
        { type: 'text', text: 'Sending it.' },
        { type: 'tool-call', id: 'c1', name: 'send', argumentsJson: '{"to":["ann@example.com"],"meta":{"cc":"bo@example.org","n":2}}' },
        { type: 'tool-call', id: 'c2', name: 'noop', argumentsJson: '{ "spaced": true }' },
      ],
    } as unknown as ChatResponse;
    await masking.checkAnswer(answer);
    const [, sent, untouched] = answer.content as Array<{ argumentsJson: string }>;
    expect(JSON.parse(sent?.argumentsJson ?? '')).toEqual({ to: ['[EMAIL]'], meta: { cc: '[EMAIL]', n: 2 } });
    expect(untouched?.argumentsJson).toBe('{ "spaced": true }');
    expect(usage).toEqual([{ name: 'emails', direction: 'output', outcome: 'masked', count: 2 }]);

    const blocking = guardOf([{ name: 'no-heron', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['heron'] } }]);
    const refused = await blocking.checkAnswer({ content: [{ type: 'tool-call', id: 'c', name: 'f', argumentsJson: '{"bird":"a grey Heron"}' }] } as unknown as ChatResponse).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: 'guardrail_blocked' });
    // Arguments that are not JSON are read as they are.
    const raw = await blocking.checkAnswer({ content: [{ type: 'tool-call', id: 'c', name: 'f', argumentsJson: '{"bird": heron' }] } as unknown as ChatResponse).catch((caught: unknown) => caught);
    expect(raw).toMatchObject({ code: 'guardrail_blocked' });
  });

  it('scans streamed tool-call arguments: a denied word split across deltas stops the stream, an address is masked', async () => {
    const call = (deltas: readonly string[]) => async function* (): AsyncIterable<StreamPart> {
      yield { type: 'tool-input-start', id: 'k', toolCallId: 'call_1', toolName: 'send', index: 0 };
      for (const delta of deltas) yield { type: 'tool-input-delta', id: 'k', delta };
      yield { type: 'tool-input-end', id: 'k' };
      yield { type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: null } as StreamPart;
    };
    const blocking = guardOf([{ name: 'no-heron', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['heron'] } }]);
    let sent = '';
    const error = await (async () => {
      for await (const part of blocking.guardStream(call(['{"bird":"a grey he', 'ron"}'])())) if (part.type === 'tool-input-delta') sent += part.delta;
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'guardrail_blocked' });
    expect(sent).not.toContain('heron');

    const masking = guardOf([{ name: 'emails', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } }]);
    let args = '';
    for await (const part of masking.guardStream(call(['{"to":"ann@exa', 'mple.com","n":1}'])())) if (part.type === 'tool-input-delta') args += part.delta;
    expect(JSON.parse(args)).toEqual({ to: '[EMAIL]', n: 1 });
  });
});
