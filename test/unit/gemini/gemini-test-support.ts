import { readFileSync } from 'node:fs';
import type { ChatRequest } from '../../../src/ir/chat-request.js';
import type { Channel } from '../../../src/domain/records.js';
import type { UpstreamTransport } from '../../../src/upstreams/upstream-adapter.js';

export function fixture(name: string): Buffer {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url));
}

export function fixtureJson(name: string): Record<string, unknown> {
  return JSON.parse(fixture(name).toString('utf8')) as Record<string, unknown>;
}

export function geminiChannel(overrides: Partial<Channel> = {}): Channel {
  return {
    id: 'ch_gemini',
    name: 'gemini',
    type: 'gemini',
    baseUrl: null,
    apiKeys: ['gemini-upstream-test'],
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

export const unusedTransport: UpstreamTransport = {
  send: () => Promise.reject(new Error('no transport in unit tests')),
};

export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'public-model', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, extensions: {}, warnings: [], ...overrides };
}

/** The body as network chunks cut at the given byte offsets (any order, duplicates ignored). */
export async function* chunked(body: Buffer, cuts: readonly number[] = []): AsyncIterable<Buffer> {
  let start = 0;
  for (const cut of [...new Set(cuts)].filter((at) => at > 0 && at < body.length).sort((a, b) => a - b)) {
    yield body.subarray(start, cut);
    start = cut;
  }
  yield body.subarray(start);
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
