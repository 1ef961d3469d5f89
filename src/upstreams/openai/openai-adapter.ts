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
  readonly types = ['openai', 'openai-compatible'] as const;
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

/** A deployment URL with `api-version`, or the v1 API (`settings.api_version: "v1"`). */
function azureUrl(channel: Channel, path: string, upstreamModel: string): string {
  const base = (channel.baseUrl ?? '').replace(/\/+$/, '');
  const apiVersion = typeof channel.settings.api_version === 'string' ? channel.settings.api_version : '2024-10-21';
  return apiVersion === 'v1'
    ? `${base}/openai/v1${path}`
    : `${base}/openai/deployments/${encodeURIComponent(upstreamModel)}${path}?api-version=${encodeURIComponent(apiVersion)}`;
}

/**
 * Azure OpenAI: deployment URLs with `api-version` (the upstream model name is the deployment), or the v1 API
 * (`settings.api_version: "v1"`), authenticated with the `api-key` header.
 */
export class AzureOpenAIAdapter extends OpenAIWireAdapter {
  readonly types = ['azure-openai'] as const;
  readonly media = openAIMediaCapabilities((channel, credential, path, upstreamModel) => ({
    url: azureUrl(channel, path, upstreamModel),
    headers: { ...channel.headers, 'api-key': credential },
  }));

  constructor(private readonly http: UpstreamTransport) {
    super();
  }

  buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, upstreamModel: string, body: string): UpstreamRequest {
    const url = azureUrl(channel, operationPath(operation), upstreamModel);
    return { url, method: 'POST', headers: { ...channel.headers, 'content-type': 'application/json', 'api-key': credential }, body };
  }

  transport(): UpstreamTransport {
    return this.http;
  }

  /** Azure serves the Responses API on its v1 API (`/openai/v1/responses`); deployment URLs are translated via chat. */
  servesPassThrough(channel: Channel, operation: UpstreamOperation): boolean {
    return operation.kind === 'responses' && channel.settings.api_version === 'v1' && servesResponsesApi(channel, true);
  }

  protected isOfficial(): boolean {
    return true;
  }
}
