import type { Channel } from '../../storage/records.js';
import type { UpstreamOperation, UpstreamRequest, UpstreamTransport } from '../upstream-adapter.js';
import { OpenAIWireAdapter } from './openai-wire-adapter.js';

function operationPath(operation: UpstreamOperation): string {
  switch (operation.kind) {
    case 'chat':
      return '/chat/completions';
    case 'embeddings':
      return '/embeddings';
    case 'count-tokens':
      throw new Error('OpenAI has no token-counting endpoint; count locally');
    default: {
      const unknown: never = operation;
      throw new Error(`unknown operation ${String(unknown)}`);
    }
  }
}

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

/** OpenAI and every OpenAI-compatible provider: `<base_url>/chat/completions` with a Bearer key. */
export class OpenAIAdapter extends OpenAIWireAdapter {
  readonly types = ['openai', 'openai-compatible'] as const;

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

  protected isOfficial(channel: Channel): boolean {
    return channel.type === 'openai';
  }
}

/**
 * Azure OpenAI: deployment URLs with `api-version` (the upstream model name is the deployment), or the v1 API
 * (`settings.api_version: "v1"`), authenticated with the `api-key` header.
 */
export class AzureOpenAIAdapter extends OpenAIWireAdapter {
  readonly types = ['azure-openai'] as const;

  constructor(private readonly http: UpstreamTransport) {
    super();
  }

  buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, upstreamModel: string, body: string): UpstreamRequest {
    const base = (channel.baseUrl ?? '').replace(/\/+$/, '');
    const apiVersion = typeof channel.settings.api_version === 'string' ? channel.settings.api_version : '2024-10-21';
    const path = operationPath(operation);
    const url = apiVersion === 'v1'
      ? `${base}/openai/v1${path}`
      : `${base}/openai/deployments/${encodeURIComponent(upstreamModel)}${path}?api-version=${encodeURIComponent(apiVersion)}`;
    return { url, method: 'POST', headers: { ...channel.headers, 'content-type': 'application/json', 'api-key': credential }, body };
  }

  transport(): UpstreamTransport {
    return this.http;
  }

  protected isOfficial(): boolean {
    return true;
  }
}
