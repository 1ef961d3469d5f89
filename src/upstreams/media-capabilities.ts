import type { ImageGenerationRequest, ImageGenerationResponse } from '../ir/image.js';
import type { Channel } from '../domain/records.js';
import type { StreamedBody, UpstreamRequest } from './upstream-adapter.js';

/** The OpenAI media endpoints, relative to the API root (`…/v1`). */
export type OpenAIMediaPath =
  | '/images/generations'
  | '/images/edits'
  | '/images/variations'
  | '/audio/transcriptions'
  | '/audio/translations'
  | '/audio/speech'
  | '/moderations';

/** A media request body: JSON text, or a multipart form streamed from disk. */
export interface MediaBody {
  contentType: string;
  body: string | StreamedBody;
}

/**
 * What an upstream can do besides chat and embeddings. An adapter leaves out what its provider does not offer; the
 * relay then skips its channels for that operation rather than calling a stub.
 */
export interface MediaCapabilities {
  /** Speaks OpenAI's media wire: the caller's body (model already swapped) to the endpoint at `path`. */
  openAIMediaRequest?(channel: Channel, credential: string, path: OpenAIMediaPath, upstreamModel: string, body: MediaBody): UpstreamRequest;
  /** Generates images from a prompt through the provider's own API (Gemini image models). */
  imageGeneration?: {
    buildRequest(channel: Channel, credential: string, request: ImageGenerationRequest, upstreamModel: string): UpstreamRequest;
    parseResponse(body: Buffer, request: ImageGenerationRequest): ImageGenerationResponse;
  };
}

/** Content-Length for a streamed body (undici would otherwise send it chunked). */
export function bodyHeaders(body: MediaBody): Record<string, string> {
  return typeof body.body === 'string' ? { 'content-type': body.contentType } : { 'content-type': body.contentType, 'content-length': String(body.body.length) };
}
