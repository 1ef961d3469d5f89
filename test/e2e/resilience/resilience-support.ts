import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { flushWrites, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream, type MockAnthropicUpstreamOptions } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream, type MockGeminiUpstreamOptions } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream, type MockOpenAIUpstreamOptions } from '../../support/mock-openai-upstream.js';

/** The three client protocol families and the three upstream kinds. */
export type Family = 'openai' | 'anthropic' | 'gemini';
export const FAMILIES: readonly Family[] = ['openai', 'anthropic', 'gemini'];

/** What a caller got, read off the wire of its own protocol. */
export interface CallResult {
  status: number;
  requestId: string;
  headers: Headers;
  /** The assembled answer text (from the whole body or from the stream's deltas). */
  text: string;
  /** Text deltas received in a stream. */
  deltas: number;
  /** The in-stream error event, when the stream ended with one. */
  streamError: Record<string, unknown> | null;
  /** The error object of a non-2xx answer. */
  error: Record<string, unknown> | null;
  /** Whether a stream ended with its protocol's normal end (OpenAI [DONE], Anthropic message_stop, Gemini finishReason). */
  completed: boolean;
}

/** One upstream mock of any kind, behind one face: its URL for a channel, its requests, fault injection. */
export interface AnyUpstream {
  kind: Family;
  /** The channel's base_url. */
  url: string;
  port: number;
  requests: Array<{ path: string; headers: Record<string, string> }>;
  /** A fault for the next `times` requests; `cut` is the number of stream events/chunks before the cut. */
  fault(fault: UpstreamFault | null): void;
  close(): Promise<void>;
}

export type UpstreamFault =
  | { kind: 'status'; status: number; headers?: Record<string, string>; times?: number }
  | { kind: 'delay'; ms: number; times?: number }
  | { kind: 'reset'; times?: number }
  | { kind: 'cut'; after: number; times?: number }
  /** the upstream answers 200, streams `after` events, then its own in-band error event (non-streaming: a cut body) */
  | { kind: 'in-band-error'; after: number; times?: number };

export const UPSTREAM_KEY: Record<Family, string> = { openai: 'sk-upstream-test', anthropic: 'sk-ant-upstream-test', gemini: 'gemini-upstream-test' };
export const UPSTREAM_MODEL: Record<Family, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' };

export async function startUpstream(kind: Family, options: { chunkDelayMs?: number } = {}): Promise<AnyUpstream> {
  switch (kind) {
    case 'openai': {
      const mock: MockOpenAIUpstream = await startMockOpenAIUpstream(options satisfies MockOpenAIUpstreamOptions);
      return {
        kind, url: mock.url, port: mock.port, requests: mock.requests, close: () => mock.close(),
        fault: (fault) => mock.setFault(fault === null ? null : fault.kind === 'cut' ? { kind: 'cut-stream', afterChunks: fault.after, times: fault.times ?? 1 } : fault.kind === 'in-band-error' ? { kind: 'stream-error', afterChunks: fault.after, times: fault.times ?? 1 } : { ...fault, times: fault.times ?? 1 }),
      };
    }
    case 'anthropic': {
      const mock: MockAnthropicUpstream = await startMockAnthropicUpstream(options satisfies MockAnthropicUpstreamOptions);
      return {
        kind, url: mock.url, port: mock.port, requests: mock.requests, close: () => mock.close(),
        fault: (fault) => mock.setFault(fault === null ? null : fault.kind === 'cut' ? { kind: 'cut-stream', afterEvents: fault.after, times: fault.times ?? 1 } : fault.kind === 'in-band-error' ? { kind: 'stream-error', afterEvents: fault.after, times: fault.times ?? 1 } : { ...fault, times: fault.times ?? 1 }),
      };
    }
    case 'gemini': {
      const mock: MockGeminiUpstream = await startMockGeminiUpstream(options satisfies MockGeminiUpstreamOptions);
      return {
        kind, url: mock.url, port: mock.port, requests: mock.requests, close: () => mock.close(),
        fault: (fault) => mock.setFault(fault === null ? null : fault.kind === 'cut' ? { kind: 'cut-stream', afterChunks: fault.after, times: fault.times ?? 1 } : fault.kind === 'in-band-error' ? { kind: 'stream-error', afterChunks: fault.after, times: fault.times ?? 1 } : { ...fault, times: fault.times ?? 1 }),
      };
    }
    default: {
      const unknown: never = kind;
      throw new Error(`unknown upstream ${String(unknown)}`);
    }
  }
}

/** A channel body for the admin API pointing at an upstream, serving `model`. */
export function channelFor(upstream: { kind: Family; url: string }, name: string, model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, type: upstream.kind, base_url: upstream.url, api_key: UPSTREAM_KEY[upstream.kind], models: { [model]: UPSTREAM_MODEL[upstream.kind] }, ...extra };
}

function endpoint(family: Family, model: string, stream: boolean): { path: string; body: Record<string, unknown>; headers: Record<string, string> } {
  switch (family) {
    case 'openai':
      return { path: '/v1/chat/completions', headers: {}, body: { model, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) } };
    case 'anthropic':
      return { path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01' }, body: { model, stream, max_tokens: 256 } };
    case 'gemini':
      return { path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, headers: {}, body: {} };
    default: {
      const unknown: never = family;
      throw new Error(`unknown family ${String(unknown)}`);
    }
  }
}

function messages(family: Family, prompt: string): Record<string, unknown> {
  return family === 'gemini' ? { contents: [{ role: 'user', parts: [{ text: prompt }] }] } : { messages: [{ role: 'user', content: prompt }] };
}

/** The `data:` payloads of an SSE body, with their event names. */
function sseEvents(body: string): Array<{ event: string | null; data: string }> {
  const events: Array<{ event: string | null; data: string }> = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return events;
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Text of a non-streaming answer in the family's shape. */
function answerText(family: Family, json: Record<string, unknown>): string {
  if (family === 'openai') return ((json.choices as Array<{ message?: { content?: string } }> | undefined)?.[0]?.message?.content) ?? '';
  if (family === 'anthropic') return ((json.content as Array<{ type: string; text?: string }> | undefined) ?? []).map((block) => block.text ?? '').join('');
  const parts = (json.candidates as Array<{ content?: { parts?: Array<{ text?: string }> } }> | undefined)?.[0]?.content?.parts ?? [];
  return parts.map((part) => part.text ?? '').join('');
}

/** Reads a stream in the family's wire format. */
function readStream(family: Family, body: string): Pick<CallResult, 'text' | 'deltas' | 'streamError' | 'completed'> {
  let text = '';
  let deltas = 0;
  let streamError: Record<string, unknown> | null = null;
  let completed = false;
  for (const { event, data } of sseEvents(body)) {
    if (family === 'openai' && data === '[DONE]') {
      completed = true;
      continue;
    }
    const json = parseJson(data);
    if (json === null) continue;
    if (json.error !== undefined || event === 'error') {
      streamError = (json.error as Record<string, unknown> | undefined) ?? json;
      continue;
    }
    let delta = '';
    if (family === 'openai') delta = (json.choices as Array<{ delta?: { content?: string | null } }> | undefined)?.[0]?.delta?.content ?? '';
    else if (family === 'anthropic') {
      if (event === 'message_stop') completed = true;
      if (event === 'content_block_delta') delta = (json.delta as { text?: string } | undefined)?.text ?? '';
    } else {
      delta = answerText('gemini', json);
      const finish = (json.candidates as Array<{ finishReason?: string }> | undefined)?.[0]?.finishReason;
      if (finish !== undefined) completed = true;
    }
    if (delta !== '') {
      text += delta;
      deltas += 1;
    }
  }
  return { text, deltas, streamError, completed };
}

/** One chat call in a family's own wire format (fetch, no SDK): what the caller received, as it received it. */
export async function callChat(
  gateway: TestGateway,
  apiKey: string,
  family: Family,
  model: string,
  prompt: string,
  stream: boolean,
  signal?: AbortSignal,
): Promise<CallResult> {
  const { path, body, headers } = endpoint(family, model, stream);
  const response = await fetch(gateway.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ ...body, ...messages(family, prompt) }),
    ...(signal === undefined ? {} : { signal }),
  });
  const raw = await response.text();
  const requestId = response.headers.get('x-request-id') ?? '';
  if (response.status >= 400) {
    const json = parseJson(raw);
    return { status: response.status, requestId, headers: response.headers, text: '', deltas: 0, streamError: null, error: (json?.error as Record<string, unknown> | undefined) ?? json, completed: false };
  }
  if (!stream) {
    const json = parseJson(raw) ?? {};
    return { status: response.status, requestId, headers: response.headers, text: answerText(family, json), deltas: 0, streamError: null, error: null, completed: true };
  }
  return { status: response.status, requestId, headers: response.headers, error: null, ...readStream(family, raw) };
}

export interface UsageRow {
  request_id: string;
  model: string;
  channel_id: string | null;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  attempts: number;
  attempted_channels: string[];
}

/** Every usage row of a key (all pages). */
export async function usageRows(gateway: TestGateway, keyId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  const rows: UsageRow[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: UsageRow[]; next_cursor: string | null } } = await gateway.admin('GET', `/admin/usage?key_id=${keyId}&limit=200${cursor === null ? '' : `&cursor=${cursor}`}`);
    rows.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return rows;
}

export async function usageRow(gateway: TestGateway, keyId: string, requestId: string): Promise<UsageRow | undefined> {
  return (await usageRows(gateway, keyId)).find((row) => row.request_id === requestId);
}

/**
 * A TCP relay in front of an upstream that records each connection's life, so a test can see the gateway close
 * its upstream connection (the caller left) without looking inside the gateway.
 */
export interface ConnectionTap {
  url(path?: string): string;
  /** Connections the gateway opened, and whether each is closed. */
  connections: Array<{ openedAt: number; closedAt: number | null }>;
  open(): number;
  close(): Promise<void>;
}

export async function startTap(targetPort: number): Promise<ConnectionTap> {
  const connections: ConnectionTap['connections'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((downstream) => {
    const record = { openedAt: Date.now(), closedAt: null as number | null };
    connections.push(record);
    const upstream = new Socket();
    upstream.connect(targetPort, '127.0.0.1');
    sockets.add(downstream);
    sockets.add(upstream);
    downstream.pipe(upstream).pipe(downstream);
    const end = (): void => {
      record.closedAt ??= Date.now();
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
    downstream.on('close', () => sockets.delete(downstream));
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = '') => `http://127.0.0.1:${port}${path}`,
    connections,
    open: () => connections.filter((connection) => connection.closedAt === null).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Active handles by type (sockets, servers, timers), to prove a run leaves nothing open. */
export function openHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const WATCHED_HANDLES = ['TCPSocketWrap', 'TCPServerWrap', 'Timeout'];

/**
 * Sockets, servers and timers open now beyond `baseline` (taken before the run started), after waiting up to
 * `waitMs` for them to close. A hand-made poll: expect.poll keeps a timer of its own running while it checks.
 */
export async function handlesLeftOver(baseline: Record<string, number>, waitMs = 3000): Promise<Record<string, number>> {
  const extra = (): Record<string, number> => {
    const now = openHandles();
    const over: Record<string, number> = {};
    for (const type of WATCHED_HANDLES) if ((now[type] ?? 0) > (baseline[type] ?? 0)) over[type] = (now[type] ?? 0) - (baseline[type] ?? 0);
    return over;
  };
  let over = extra();
  for (let waited = 0; Object.keys(over).length > 0 && waited < waitMs; waited += 50) {
    await sleep(50);
    over = extra();
  }
  return over;
}
