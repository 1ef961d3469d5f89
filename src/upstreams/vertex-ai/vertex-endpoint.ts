import type { Channel } from '../../domain/records.js';
import type { ServiceAccount } from './service-account.js';
import { geminiMethodQuery } from '../../wire/gemini/wire.js';

/** Who publishes a model on Vertex AI: Google (Gemini, the generateContent wire) or Anthropic (Claude, the Messages wire). */
export type VertexPublisher = 'google' | 'anthropic';

export type VertexMethod = 'generateContent' | 'streamGenerateContent' | 'rawPredict' | 'streamRawPredict';

export const VERTEX_DEFAULT_LOCATION = 'global';

/** Claude models are Anthropic's; every other model is served by Google's publisher. */
export function publisherOf(upstreamModel: string): VertexPublisher {
  return /^claude/i.test(upstreamModel) ? 'anthropic' : 'google';
}

export function vertexLocation(channel: Channel): string {
  const location = channel.settings.location;
  return typeof location === 'string' && location !== '' ? location : VERTEX_DEFAULT_LOCATION;
}

/** `settings.project_id`, else the service-account key's own project. */
export function vertexProject(channel: Channel, account: ServiceAccount): string {
  const project = channel.settings.project_id;
  if (typeof project === 'string' && project !== '') return project;
  return account.projectId ?? '';
}

/**
 * `{base}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`; the base is
 * `channel.baseUrl`, else `https://aiplatform.googleapis.com` for the global location and
 * `https://{location}-aiplatform.googleapis.com` for a region. Gemini streams are asked for as the Gemini wire marks them.
 */
export function vertexUrl(channel: Channel, account: ServiceAccount, upstreamModel: string, method: VertexMethod): string {
  const location = vertexLocation(channel);
  const base = (channel.baseUrl ?? (location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`)).replace(/\/+$/, '');
  const path = `/v1/projects/${encodeURIComponent(vertexProject(channel, account))}/locations/${encodeURIComponent(location)}/publishers/${publisherOf(upstreamModel)}/models/${encodeURIComponent(upstreamModel)}`;
  return `${base}${path}:${method}${geminiMethodQuery(method)}`;
}
