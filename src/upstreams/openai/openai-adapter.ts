import type { Channel } from '../../domain/records.js';
import type { RerankRequest } from '../../ir/rerank.js';
import { jinaShapedBody, parseJinaShapedAnswer } from '../rerank-answer.js';
import type { UpstreamOperation, UpstreamRequest, UpstreamRerank, UpstreamTransport } from '../upstream-adapter.js';
import { openAIWire } from '../../wire/openai/wire.js';
import { passThroughEndpoint } from '../../wire/wire.js';
import { openAIMediaCapabilities } from './openai-media.js';
import { OpenAIWireAdapter } from './openai-wire-adapter.js';
import { servesResponsesApi } from './serves-responses-api.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

/** OpenAI and every OpenAI-compatible provider: `<base_url>/chat/completions` with a Bearer key. */
export class OpenAIAdapter extends OpenAIWireAdapter {
  readonly media = openAIMediaCapabilities((channel, credential, path) => ({
    url: joinUrl(channel.baseUrl ?? OPENAI_DEFAULT_BASE_URL, path),
    headers: { ...channel.headers, authorization: `Bearer ${credential}` },
  }));

  /**
   * A self-hosted `openai-compatible` server that copies Jina's `/v1/rerank` (vLLM, Infinity, LocalAI …); OpenAI's
   * own API has no rerank, so `openai` channels are skipped.
   */
  readonly rerank: UpstreamRerank = {
    build: (channel: Channel, credential: string, request: RerankRequest, upstreamModel: string): UpstreamRequest | null =>
      channel.type === 'openai' ? null : this.buildPassThroughTo(channel, credential, '/rerank', jinaShapedBody(request, upstreamModel)),
    parse: parseJinaShapedAnswer,
  };

  constructor(private readonly http: UpstreamTransport) {
    super();
  }

  buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, _upstreamModel: string, body: string | Buffer): UpstreamRequest {
    return this.buildPassThroughTo(channel, credential, passThroughEndpoint(openAIWire, operation), body);
  }

  private buildPassThroughTo(channel: Channel, credential: string, path: string, body: string | Buffer): UpstreamRequest {
    const base = channel.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
    return {
      url: joinUrl(base, path),
      method: 'POST',
      headers: { ...channel.headers, 'content-type': 'application/json', authorization: `Bearer ${credential}` },
      body,
    };
  }

  transport(): UpstreamTransport {
    return this.http;
  }

  protected override servesResponsesApi(channel: Channel): boolean {
    return servesResponsesApi(channel, channel.type === 'openai');
  }

  protected isOfficial(channel: Channel): boolean {
    return channel.type === 'openai';
  }
}
