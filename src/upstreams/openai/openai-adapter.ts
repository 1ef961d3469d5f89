import type { Channel } from '../../domain/records.js';
import type { RerankRequest } from '../../ir/rerank.js';
import { jinaShapedBody, parseOpenAICompatibleRerank, teiRerankBody } from '../rerank-answer.js';
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

/** Which rerank API an `openai-compatible` channel's server speaks (`settings.rerank_api`): Jina's by default. */
export type RerankApi = 'jina' | 'tei';
export const RERANK_APIS: readonly RerankApi[] = ['jina', 'tei'];

export function rerankApiOf(channel: Channel): RerankApi {
  return channel.settings.rerank_api === 'tei' ? 'tei' : 'jina';
}

/**
 * Where TEI's own rerank lives: `settings.rerank_base_url` + `/rerank`, else the server's root + `/rerank` (TEI serves
 * its OpenAI front under `/v1` and its own API at the root, so a base URL ending in `/v1` loses that part).
 */
export function teiRerankUrl(channel: Channel): string {
  const setting = channel.settings.rerank_base_url;
  const base = typeof setting === 'string' && setting !== '' ? setting : (channel.baseUrl ?? '').replace(/\/+$/, '').replace(/\/v1$/, '');
  return joinUrl(base, '/rerank');
}

/** OpenAI and every OpenAI-compatible provider: `<base_url>/chat/completions` with a Bearer key. */
export class OpenAIAdapter extends OpenAIWireAdapter {
  readonly media = openAIMediaCapabilities((channel, credential, path) => ({
    url: joinUrl(channel.baseUrl ?? OPENAI_DEFAULT_BASE_URL, path),
    headers: { ...channel.headers, authorization: `Bearer ${credential}` },
  }));

  /**
   * A self-hosted `openai-compatible` server: one that copies Jina's `/v1/rerank` (vLLM, Infinity, LocalAI …), or
   * with `settings.rerank_api: tei` Hugging Face TEI's own `POST /rerank`. OpenAI's own API has no rerank, so
   * `openai` channels are skipped.
   */
  readonly rerank: UpstreamRerank = {
    build: (channel: Channel, credential: string, request: RerankRequest, upstreamModel: string): UpstreamRequest | null => {
      if (channel.type === 'openai') return null;
      if (rerankApiOf(channel) === 'tei') return { ...this.buildPassThroughTo(channel, credential, '/rerank', teiRerankBody(request)), url: teiRerankUrl(channel) };
      return this.buildPassThroughTo(channel, credential, '/rerank', jinaShapedBody(request, upstreamModel));
    },
    parse: parseOpenAICompatibleRerank,
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
