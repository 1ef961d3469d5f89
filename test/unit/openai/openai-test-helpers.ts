import { readFileSync } from 'node:fs';
import type { ChatRequest } from '../../../src/ir/chat-request.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';
import type { Channel, ChannelType } from '../../../src/domain/records.js';
import type { UpstreamResponse, UpstreamTransport } from '../../../src/upstreams/upstream-adapter.js';

const FIXTURES = new URL('./__fixtures__/', import.meta.url);

export function fixtureText(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

export function fixtureBuffer(name: string): Buffer {
  return Buffer.from(fixtureText(name), 'utf8');
}

/** A `*.chunks.txt` fixture (one data payload a line) as the SSE bytes an upstream sends. */
export function sseFixture(name: string, eol = '\n'): Buffer {
  const lines = fixtureText(name).split('\n').filter((line) => line.trim() !== '');
  return Buffer.from(lines.map((line) => `data: ${line}${eol}${eol}`).join(''), 'utf8');
}

/** Bytes cut into pieces at the given offsets (sorted, deduplicated, in range). */
export function splitAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.filter((cut) => cut > 0 && cut < bytes.length))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    pieces.push(bytes.subarray(start, point));
    start = point;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

export async function* bodyOf(pieces: readonly Buffer[]): AsyncIterable<Buffer> {
  for (const piece of pieces) yield piece;
}

export async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

export function channel(type: ChannelType, overrides: Partial<Channel> = {}): Channel {
  return {
    id: 'ch_1', name: 'primary', type, baseUrl: null, apiKeys: ['sk-test'], models: {}, priority: 0, weight: 1, enabled: true,
    headers: {}, settings: {}, createdAt: 0, updatedAt: 0, ...overrides,
  };
}

export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'public-model', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }], stream: false, extensions: {}, warnings: [],
    ...overrides,
  };
}

/** A transport that must not be used (tests that only build requests). */
export const unusedTransport: UpstreamTransport = {
  send: (): Promise<UpstreamResponse> => Promise.reject(new Error('unexpected upstream call')),
};

export function parsedBody(body: string | null): Record<string, unknown> {
  return JSON.parse(body ?? 'null') as Record<string, unknown>;
}
