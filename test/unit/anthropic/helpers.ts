/** Shared helpers of the Anthropic unit tests: fixtures, byte streams split at chosen points, SDK over a fake fetch. */
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import type { ChatRequest } from '../../../src/ir/chat-request.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';
import type { Channel } from '../../../src/domain/records.js';

const FIXTURES = new URL('./__fixtures__/', import.meta.url);

export function fixtureText(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

export function fixtureJson(name: string): Record<string, unknown> {
  return JSON.parse(fixtureText(name)) as Record<string, unknown>;
}

/** The bytes of `text` as chunks cut at the given byte offsets (which may fall inside a UTF-8 character). */
export async function* chunked(text: string, cuts: readonly number[] = []): AsyncIterable<Buffer> {
  const bytes = Buffer.from(text, 'utf8');
  let start = 0;
  for (const cut of [...new Set(cuts)].filter((at) => at > 0 && at < bytes.length).sort((a, b) => a - b)) {
    yield bytes.subarray(start, cut);
    start = cut;
  }
  yield bytes.subarray(start);
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export function channel(overrides: Partial<Channel> = {}): Channel {
  return {
    id: 'ch_test',
    name: 'anthropic-test',
    type: 'anthropic',
    baseUrl: null,
    apiKeys: ['sk-ant-test'],
    models: {},
    priority: 0,
    weight: 1,
    enabled: true,
    headers: {},
    settings: {},
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
  };
}

export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'claude-test', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, extensions: {}, warnings: [], ...overrides };
}

/** The official SDK, answered by `body` (JSON or SSE text) with `status`, instead of a server. */
export function sdkAnswering(body: string, status = 200, contentType = body.startsWith('event:') ? 'text/event-stream' : 'application/json'): Anthropic {
  return new Anthropic({
    apiKey: 'sk-ant-test',
    baseURL: 'http://gateway.test',
    maxRetries: 0,
    fetch: () => Promise.resolve(new Response(body, { status, headers: { 'content-type': contentType, 'request-id': 'req_test' } })),
  });
}

/** Canonical stream parts with text deltas of one block joined (chunking changes how deltas are split). */
export function joinDeltas(parts: readonly StreamPart[]): StreamPart[] {
  const out: StreamPart[] = [];
  for (const part of parts) {
    const last = out.at(-1);
    if (
      last !== undefined &&
      (part.type === 'text-delta' || part.type === 'reasoning-delta' || part.type === 'tool-input-delta') &&
      last.type === part.type &&
      last.id === part.id
    ) {
      out[out.length - 1] = { ...last, delta: last.delta + part.delta };
    } else out.push(part);
  }
  return out;
}
