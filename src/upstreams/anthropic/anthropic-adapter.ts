import type { ChatRequest } from '../../ir/chat-request.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Channel } from '../../domain/records.js';
import type { UpstreamAdapter, UpstreamPassThrough, UpstreamRequest, UpstreamTransport } from '../upstream-adapter.js';
import { anthropicWire, type AnthropicPath } from '../../wire/anthropic/wire.js';
import { passThroughEndpoint } from '../../wire/wire.js';
import { mapsHostedTools } from '../hosted-tools.js';
import { buildAnthropicBody, buildAnthropicCountTokensBody, type AnthropicBodyOptions } from './build-request-body.js';
import { parseAnthropicResponse, malformedUpstreamBody } from './parse-response.js';
import { parseAnthropicStream } from './parse-stream.js';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** The API version sent unless the channel's headers or settings, or a pass-through caller, name another. */
export const ANTHROPIC_DEFAULT_VERSION = '2023-06-01';
/** max_tokens when the caller set none: Anthropic requires one; `settings.default_max_tokens` overrides. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** `<base>/v1/<path>`; the base may be given with or without its `/v1`. */
export function anthropicUrl(channel: Channel, path: AnthropicPath): string {
  const base = (channel.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${base}/v1/${path}`;
}

/**
 * Headers for a channel: its own headers (names lowercased, so a caller's pass-through `anthropic-version` or
 * `anthropic-beta` assigned afterwards replaces them), the key as `x-api-key`, and `anthropic-version`.
 */
export function anthropicHeaders(channel: Channel, credential: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(channel.headers)) headers[name.toLowerCase()] = value;
  const version = typeof channel.settings.anthropic_version === 'string' ? channel.settings.anthropic_version : ANTHROPIC_DEFAULT_VERSION;
  headers['anthropic-version'] ??= version;
  headers['content-type'] = 'application/json';
  headers['x-api-key'] = credential;
  return headers;
}

export function anthropicBodyOptions(channel: Channel, upstreamModel: string, publicModel: string): AnthropicBodyOptions {
  const configured = channel.settings.default_max_tokens;
  return {
    upstreamModel,
    defaultMaxTokens: typeof configured === 'number' && Number.isInteger(configured) && configured > 0 ? configured : ANTHROPIC_DEFAULT_MAX_TOKENS,
    structuredOutputs: channel.settings.structured_outputs === true,
    hostedTools: mapsHostedTools(channel, publicModel),
  };
}

function parseAnthropicCountTokens(body: Buffer): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw malformedUpstreamBody();
  }
  const count = (parsed as { input_tokens?: unknown } | null)?.input_tokens;
  if (typeof count !== 'number' || !Number.isFinite(count) || count < 0) throw malformedUpstreamBody();
  return Math.floor(count);
}

/** Anthropic's Messages API (`anthropic` channels): `POST /v1/messages` with `x-api-key` and `anthropic-version`. */
export class AnthropicAdapter implements UpstreamAdapter {
  readonly wire = anthropicWire;

  constructor(private readonly http: UpstreamTransport) {}

  readonly passThrough: UpstreamPassThrough = {
    build: (channel, credential, operation, _upstreamModel, body) => ({
      url: anthropicUrl(channel, passThroughEndpoint(anthropicWire, operation)),
      method: 'POST',
      headers: anthropicHeaders(channel, credential),
      body,
    }),
  };

  transport(): UpstreamTransport {
    return this.http;
  }

  buildChatRequest(channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest {
    const body = buildAnthropicBody(request, anthropicBodyOptions(channel, upstreamModel, request.model));
    return { url: anthropicUrl(channel, 'messages'), method: 'POST', headers: anthropicHeaders(channel, credential), body: JSON.stringify(body) };
  }

  parseChatResponse(body: Buffer, _request: ChatRequest): ChatResponse {
    return parseAnthropicResponse(body);
  }

  parseChatStream(body: AsyncIterable<Buffer>, _request: ChatRequest): AsyncIterable<StreamPart> {
    return parseAnthropicStream(body);
  }

  readonly countTokens = {
    build: (channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest => {
      const body = buildAnthropicCountTokensBody(request, anthropicBodyOptions(channel, upstreamModel, request.model));
      return { url: anthropicUrl(channel, 'messages/count_tokens'), method: 'POST', headers: anthropicHeaders(channel, credential), body: JSON.stringify(body) };
    },
    parse: parseAnthropicCountTokens,
  };
}
