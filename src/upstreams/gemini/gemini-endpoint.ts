import type { Channel } from '../../domain/records.js';
import { geminiMethodQuery, type GeminiMethod } from '../../wire/gemini/wire.js';

export type { GeminiMethod } from '../../wire/gemini/wire.js';

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';
export const GEMINI_DEFAULT_API_VERSION = 'v1beta';

/** `tunedModels/x` stays as it is; `models/x` and a bare `x` become `models/x`. */
export function geminiModelResource(upstreamModel: string): string {
  if (upstreamModel.startsWith('models/') || upstreamModel.startsWith('tunedModels/')) return upstreamModel;
  return `models/${upstreamModel}`;
}

/**
 * `{base}/{version}/models/{model}:{method}` with the method's query (streams as SSE). The base is `channel.baseUrl` (default
 * Google's), the version `settings.api_version` (default v1beta) unless the base already ends in a version.
 */
export function geminiUrl(channel: Channel, upstreamModel: string, method: GeminiMethod): string {
  const base = (channel.baseUrl ?? GEMINI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const version = typeof channel.settings.api_version === 'string' && channel.settings.api_version !== '' ? channel.settings.api_version : GEMINI_DEFAULT_API_VERSION;
  const root = /\/v\d+(?:alpha|beta)?\d*$/.test(base) ? base : `${base}/${version}`;
  const resource = geminiModelResource(upstreamModel).split('/').map(encodeURIComponent).join('/');
  return `${root}/${resource}:${method}${geminiMethodQuery(method)}`;
}

/** The channel's extra headers, JSON, and the key in `x-goog-api-key` (what Google's SDKs send). */
export function geminiHeaders(channel: Channel, credential: string): Record<string, string> {
  return { ...channel.headers, 'content-type': 'application/json', 'x-goog-api-key': credential };
}
