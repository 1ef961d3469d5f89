import type { Channel } from '../../storage/records.js';
import { bodyHeaders, type MediaBody, type MediaCapabilities, type OpenAIMediaPath } from '../media-capabilities.js';
import type { UpstreamRequest } from '../upstream-adapter.js';
import type { MediaKind } from '../upstream-descriptor.js';

/** Where a media path lives on an OpenAI-wire channel, and how it is authenticated. */
export type OpenAIMediaTarget = (channel: Channel, credential: string, path: OpenAIMediaPath, upstreamModel: string) => { url: string; headers: Record<string, string> };

/**
 * OpenAI's media endpoints (images, audio, moderations) on every OpenAI-wire channel: the caller's body goes as it
 * is (the model name already swapped), JSON or a multipart form streamed from the spooled upload.
 */
export function openAIMediaCapabilities(target: OpenAIMediaTarget): MediaCapabilities {
  return {
    openAIMediaRequest(channel: Channel, credential: string, path: OpenAIMediaPath, upstreamModel: string, body: MediaBody): UpstreamRequest {
      const { url, headers } = target(channel, credential, path, upstreamModel);
      const request: UpstreamRequest = { url, method: 'POST', headers: { ...headers, ...bodyHeaders(body) }, body: typeof body.body === 'string' ? body.body : null };
      if (typeof body.body !== 'string') request.streamedBody = body.body;
      return request;
    },
  };
}

/** Every media kind the OpenAI media endpoints serve. */
export const OPENAI_MEDIA_KINDS: readonly MediaKind[] = ['image-generation', 'image-edits', 'image-variations', 'transcriptions', 'translations', 'speech', 'moderations'];
