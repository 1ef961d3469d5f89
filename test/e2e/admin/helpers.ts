/** Shared helpers of the admin end-to-end tests: raw HTTP calls and the gateway's error object. */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestGateway } from '../../support/gateway-harness.js';

export interface HttpAnswer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer <token>`; null sends no Authorization header. */
  token?: string | null;
  body?: unknown;
  /** A body sent as it is (not JSON-encoded). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** One HTTP call against the gateway; the answer's JSON (when it is JSON) is parsed into `body`. */
export async function call<T = Record<string, unknown>>(baseUrl: string, method: string, route: string, options: CallOptions = {}): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined && options.token !== null) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(baseUrl + route, { method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  let parsed: unknown = {};
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { __not_json: text };
    }
  }
  return { status: response.status, headers: response.headers, text, body: parsed as T };
}

/** An admin call with the gateway's admin token, answer text included (for "never in the JSON" checks). */
export function admin<T = Record<string, unknown>>(gateway: TestGateway, method: string, route: string, body?: unknown): Promise<HttpAnswer<T>> {
  return call<T>(gateway.url, method, route, { token: gateway.adminToken, ...(body === undefined ? {} : { body }) });
}

export interface ExpectedError {
  status?: number;
  type?: string;
  code?: string;
  param?: string;
}

/** The spec's error object: `{ error: { message, type, code } }`, all strings, and whatever else is expected. */
export function expectError(answer: HttpAnswer<unknown>, expected: ExpectedError = {}): { message: string; type: string; code: string; param?: unknown } {
  const context = `${answer.status} ${answer.text}`;
  if (expected.status !== undefined) expect(answer.status, context).toBe(expected.status);
  expect(answer.headers.get('content-type') ?? '', context).toMatch(/application\/json/);
  const body = answer.body as { error?: Record<string, unknown> };
  expect(body, context).toHaveProperty('error');
  const error = body.error as Record<string, unknown>;
  expect(typeof error.message, context).toBe('string');
  expect((error.message as string).length, context).toBeGreaterThan(0);
  expect(typeof error.type, context).toBe('string');
  expect(typeof error.code, context).toBe('string');
  if (expected.type !== undefined) expect(error.type, context).toBe(expected.type);
  if (expected.code !== undefined) expect(error.code, context).toBe(expected.code);
  if (expected.param !== undefined) expect(error.param, context).toBe(expected.param);
  return error as { message: string; type: string; code: string; param?: unknown };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export interface ChatOptions {
  content?: string;
  stream?: boolean;
  headers?: Record<string, string>;
}

/** POST /v1/chat/completions with a client key (raw fetch, so every status and header is visible). */
export function chat(gateway: TestGateway, key: string | null, model: string, options: ChatOptions = {}): Promise<HttpAnswer> {
  return call(gateway.url, 'POST', '/v1/chat/completions', {
    token: key,
    body: { model, messages: [{ role: 'user', content: options.content ?? 'Hello there' }], ...(options.stream === true ? { stream: true } : {}) },
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  });
}

/** A priced model served by a simulator channel (no upstream needed). */
export async function addSimulatorModel(
  gateway: TestGateway,
  model: string,
  pricing: Record<string, number> = { input_per_mtok: 1, output_per_mtok: 2 },
  channel: Record<string, unknown> = {},
): Promise<{ channelId: string }> {
  const created = await admin(gateway, 'POST', '/admin/models', { id: model, pricing });
  expect(created.status, created.text).toBe(201);
  const added = await admin<{ id: string }>(gateway, 'POST', '/admin/channels', { name: `sim-${model}`, type: 'simulator', models: [model], ...channel });
  expect(added.status, added.text).toBe(201);
  return { channelId: added.body.id };
}

/** Follows `next_cursor` until `has_more` is false; returns every item. Fails after `maxPages`. */
export async function collectPages<T = Record<string, unknown>>(gateway: TestGateway, route: string, limit: number, maxPages = 100): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let page = 1; page <= maxPages; page += 1) {
    const separator = route.includes('?') ? '&' : '?';
    const url: string = `${route}${separator}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const answer: HttpAnswer<{ data: T[]; has_more: boolean; next_cursor: string | null }> = await admin(gateway, 'GET', url);
    expect(answer.status, answer.text).toBe(200);
    expect(Array.isArray(answer.body.data)).toBe(true);
    expect(answer.body.data.length).toBeLessThanOrEqual(limit);
    items.push(...answer.body.data);
    if (!answer.body.has_more) {
      expect(answer.body.next_cursor ?? null).toBeNull();
      return { items, pages: page };
    }
    expect(typeof answer.body.next_cursor).toBe('string');
    cursor = answer.body.next_cursor;
  }
  throw new Error(`${route}: more than ${maxPages} pages`);
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
