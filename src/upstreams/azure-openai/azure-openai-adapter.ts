import type { Channel } from '../../domain/records.js';
import { openAIMediaCapabilities } from '../openai/openai-media.js';
import { OpenAIWireAdapter } from '../openai/openai-wire-adapter.js';
import { servesResponsesApi } from '../openai/serves-responses-api.js';
import type { UpstreamOperation, UpstreamRequest, UpstreamTransport } from '../upstream-adapter.js';
import { openAIWire } from '../../wire/openai/wire.js';
import { passThroughEndpoint } from '../../wire/wire.js';

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
  readonly media = openAIMediaCapabilities((channel, credential, path, upstreamModel) => ({
    url: azureUrl(channel, path, upstreamModel),
    headers: { ...channel.headers, 'api-key': credential },
  }));

  constructor(private readonly http: UpstreamTransport) {
    super();
  }

  buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, upstreamModel: string, body: string | Buffer): UpstreamRequest {
    const url = azureUrl(channel, passThroughEndpoint(openAIWire, operation), upstreamModel);
    return { url, method: 'POST', headers: { ...channel.headers, 'content-type': 'application/json', 'api-key': credential }, body };
  }

  transport(): UpstreamTransport {
    return this.http;
  }

  /** Azure serves the Responses API on its v1 API (`/openai/v1/responses`); deployment URLs are translated via chat. */
  protected override servesResponsesApi(channel: Channel, operation: UpstreamOperation): boolean {
    return operation.kind === 'responses' && channel.settings.api_version === 'v1' && servesResponsesApi(channel, true);
  }

  protected isOfficial(): boolean {
    return true;
  }
}
