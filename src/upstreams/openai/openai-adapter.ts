import type { Channel } from '../../storage/records.js';
import type { UpstreamOperation, UpstreamRequest, UpstreamTransport } from '../upstream-adapter.js';
import { openAIMediaCapabilities } from './openai-media.js';
import { OpenAIWireAdapter } from './openai-wire-adapter.js';
import { servesResponsesApi } from './serves-responses-api.js';

export function operationPath(operation: UpstreamOperation): string {
  switch (operation.kind) {
    case 'chat':
      return '/chat/completions';
    case 'embeddings':
      return '/embeddings';
    case 'responses':
      return '/responses';
    case 'responses-input-tokens':
      return '/responses/input_tokens';
    case 'count-tokens':
      throw new Error('OpenAI has no token-counting endpoint; count locally');
    default: {
      const unknown: never = operation;
      throw new Error(`unknown operation ${String(unknown)}`);
    }
  }
}

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

  constructor(private readonly http: UpstreamTransport) {
    super();
  }

  buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, _upstreamModel: string, body: string): UpstreamRequest {
    const base = channel.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
    return {
      url: joinUrl(base, operationPath(operation)),
      method: 'POST',
      headers: { ...channel.headers, 'content-type': 'application/json', authorization: `Bearer ${credential}` },
      body,
    };
  }

  transport(): UpstreamTransport {
    return this.http;
  }

  servesPassThrough(channel: Channel, operation: UpstreamOperation): boolean {
    return (operation.kind === 'responses' || operation.kind === 'responses-input-tokens') && servesResponsesApi(channel, channel.type === 'openai');
  }

  protected isOfficial(channel: Channel): boolean {
    return channel.type === 'openai';
  }
}
