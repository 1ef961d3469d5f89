import { request } from 'undici';
import { z } from 'zod';
import { issueApiKey } from '../../auth/api-key-format.js';
import { nanoToUsd } from '../../billing/money.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson, sendRaw } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { describeError } from '../../shared/logger.js';
import { newId } from '../../shared/ids.js';
import type { ApiKey } from '../../domain/records.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import type { PlaygroundCompletionJson, PlaygroundSummaryJson } from '../../contract/playground.js';
import { consoleRoutes } from '../console-route-table.js';

/** A playground key lives this long at most, even if revoking it after the call failed. */
const PLAYGROUND_KEY_TTL_MS = 5 * 60_000;
const PLAYGROUND_NAME = 'playground';

const playgroundSchema = z.object({
  model: z.string().min(1).max(200),
  messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(100_000) }).strict()).min(1).max(100),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().min(1).max(32_768).optional(),
  /** false: one JSON answer instead of the event stream. */
  stream: z.boolean().optional(),
}).strict();

interface StreamFacts {
  firstTokenMs: number | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

/** Reads the usage chunk and the first content delta out of the chat-completion SSE events, as they pass. */
class StreamWatcher {
  readonly facts: StreamFacts = { firstTokenMs: null, inputTokens: 0, outputTokens: 0, costUsd: null };
  #pending = '';

  constructor(private readonly startedAt: number) {}

  push(text: string): void {
    this.#pending += text;
    let boundary = this.#pending.indexOf('\n\n');
    while (boundary >= 0) {
      this.#event(this.#pending.slice(0, boundary));
      this.#pending = this.#pending.slice(boundary + 2);
      boundary = this.#pending.indexOf('\n\n');
    }
  }

  #event(block: string): void {
    for (const line of block.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '' || data === '[DONE]') continue;
      let chunk: { choices?: Array<{ delta?: { content?: unknown } }>; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; cost?: unknown } | null };
      try {
        chunk = JSON.parse(data) as typeof chunk;
      } catch {
        continue;
      }
      const content = chunk.choices?.[0]?.delta?.content;
      if (this.facts.firstTokenMs === null && typeof content === 'string' && content !== '') this.facts.firstTokenMs = Math.round(performance.now() - this.startedAt);
      const usage = chunk.usage;
      if (usage !== null && usage !== undefined) {
        if (typeof usage.prompt_tokens === 'number') this.facts.inputTokens = usage.prompt_tokens;
        if (typeof usage.completion_tokens === 'number') this.facts.outputTokens = usage.completion_tokens;
        if (typeof usage.cost === 'number') this.facts.costUsd = usage.cost;
      }
    }
  }
}

/**
 * POST /api/playground/chat: the console is a client of its own gateway. It mints a key for the signed-in account
 * (that model only, minutes to live, hidden from the keys page), streams a chat completion from the API listener
 * over HTTP with it, relays the SSE events, adds a final `event: summary`, and revokes the key.
 */
export const PLAYGROUND_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, catalog, keys, config, logger, usageLog } = deps.services;

  const revoke = async (keyId: string): Promise<void> => {
    try {
      await storage.keys.update(keyId, { status: 'revoked' }, clock.now());
      await keys.invalidateKey(keyId);
    } catch (error) {
      logger.warn('playground key not revoked (it expires by itself)', { keyId, ...describeError(error) });
    }
  };

  /** The cost the usage log recorded for the key's call (when the stream's usage carried none). */
  const loggedCost = async (accountId: string, keyId: string): Promise<number | null> => {
    await usageLog.flush();
    const page = await storage.usage.query({ accountId, keyId }, { limit: 1, after: null });
    const row = page.data[0];
    return row === undefined ? null : nanoToUsd(row.costNano);
  };
  return { deps, storage, clock, catalog, keys, config, logger, usageLog, revoke, loggedCost };
}, [
  { method: 'POST', path: '/api/playground/chat', who: 'member', permission: 'playground:use', handler: ({ deps, storage, clock, catalog, keys, config, logger, revoke, loggedCost }) => async ({ context, active }) => {
    const input = parseInput(playgroundSchema, await readConsoleBody(context));
    if (catalog.model(input.model) === undefined || !catalog.hasRoute(input.model)) {
      throw new GatewayError('model_not_found', `The model '${input.model}' does not exist or is not available to you.`, { param: 'model' });
    }
    const now = clock.now();
    const issued = issueApiKey('sk', config.keyBrand);
    const key: ApiKey = {
      id: newId('key', now), accountId: active.session.accountId, name: PLAYGROUND_NAME, secretHash: issued.secretHash, displayHint: issued.displayHint,
      status: 'enabled', quotaNano: null, spentNano: 0n, budget: null, allowedOrigins: null, allowedModels: [input.model], ipAllowlist: null, expiresAt: now + PLAYGROUND_KEY_TTL_MS,
      rpm: null, tpm: null, concurrency: 1, createdAt: now, updatedAt: now, environment: null, createdBy: active.user.id, playground: true,
    };
    await storage.keys.create(key);
    keys.issued.add(key.secretHash);
    const abort = new AbortController();
    const onClose = (): void => {
      if (!context.response.writableFinished) abort.abort();
    };
    context.response.once('close', onClose);
    const startedAt = performance.now();
    const streamed = input.stream !== false;
    // What the gateway is sent, as a caller with a key of their own would send it (the console shows it as curl).
    const { stream: _stream, ...fields } = input;
    const sent = streamed ? { ...fields, stream: true, stream_options: { include_usage: true } } : fields;
    try {
      const answer = await request(`${deps.urls.apiInternal()}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${issued.plaintext}`, 'content-type': 'application/json' },
        body: JSON.stringify(sent),
        signal: abort.signal,
      });
      const requestId = String(answer.headers['x-request-id'] ?? '');
      if (answer.statusCode === 200 && !streamed) {
        const completion = await answer.body.json() as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; cost?: unknown } };
        const usage = completion.usage ?? {};
        const summary: PlaygroundSummaryJson = {
          request_id: requestId,
          model: input.model,
          input_tokens: typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0,
          output_tokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0,
          cost_usd: typeof usage.cost === 'number' ? usage.cost : await loggedCost(key.accountId, key.id),
          latency_ms: Math.round(performance.now() - startedAt),
          first_token_ms: null,
          request_body: sent,
        };
        const unstreamed: PlaygroundCompletionJson = { object: 'playground.completion', completion, summary };
        sendJson(context, 200, unstreamed);
        return;
      }
      if (answer.statusCode !== 200) {
        // The gateway's own error object (no key, no upstream detail), with its status, before any event was sent.
        const body = await answer.body.text();
        const retryAfter = answer.headers['retry-after'];
        sendRaw(context, answer.statusCode, body, 'application/json', typeof retryAfter === 'string' ? { 'retry-after': retryAfter } : undefined);
        return;
      }
      const response = context.response;
      response.statusCode = 200;
      response.setHeader('content-type', 'text/event-stream; charset=utf-8');
      response.setHeader('x-accel-buffering', 'no');
      response.setHeader('x-upstream-request-id', requestId);
      response.flushHeaders();
      const watcher = new StreamWatcher(startedAt);
      try {
        for await (const chunk of answer.body as AsyncIterable<Buffer>) {
          watcher.push(chunk.toString('utf8'));
          if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        logger.warn('playground stream broke off', { requestId: context.requestId, ...describeError(error) });
        const failure = { error: { message: 'The answer broke off before it was complete.', type: 'upstream_error', code: 'upstream_error' } };
        response.end(`event: error\ndata: ${JSON.stringify(failure)}\n\n`);
        return;
      }
      const facts = watcher.facts;
      const summary: PlaygroundSummaryJson = {
        request_id: requestId,
        model: input.model,
        input_tokens: facts.inputTokens,
        output_tokens: facts.outputTokens,
        cost_usd: facts.costUsd ?? (await loggedCost(key.accountId, key.id)),
        latency_ms: Math.round(performance.now() - startedAt),
        first_token_ms: facts.firstTokenMs,
        request_body: sent,
      };
      response.end(`event: summary\ndata: ${JSON.stringify(summary)}\n\n`);
    } finally {
      context.response.off('close', onClose);
      await revoke(key.id);
    }
  } },
]);
