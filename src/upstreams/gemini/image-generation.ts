import type { ImageGenerationRequest, ImageGenerationResponse, GeneratedImage } from '../../ir/image.js';
import type { Channel } from '../../storage/records.js';
import { usageFromGemini } from '../../wire/gemini/usage.js';
import type { MediaCapabilities } from '../media-capabilities.js';
import type { UpstreamRequest } from '../upstream-adapter.js';
import { geminiHeaders, geminiUrl } from './gemini-endpoint.js';
import { isJsonObject, parseJson, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { unreadableUpstreamBody } from './parse-response.js';

/** The aspect ratios Gemini image models take (`imageConfig.aspectRatio`). */
const ASPECT_RATIOS: ReadonlyArray<[string, number]> = [
  ['1:1', 1], ['2:3', 2 / 3], ['3:2', 3 / 2], ['3:4', 3 / 4], ['4:3', 4 / 3], ['4:5', 4 / 5], ['5:4', 5 / 4], ['9:16', 9 / 16], ['16:9', 16 / 9], ['21:9', 21 / 9],
];

/** OpenAI's `WIDTHxHEIGHT` → the nearest Gemini aspect ratio; null for `auto` or no size. */
export function aspectRatioFor(size: string | undefined): string | null {
  if (size === undefined || size === 'auto') return null;
  const match = /^(\d+)x(\d+)$/.exec(size);
  if (match === null) return null;
  const ratio = Number(match[1]) / Number(match[2]);
  let best = ASPECT_RATIOS[0] as [string, number];
  for (const candidate of ASPECT_RATIOS) if (Math.abs(Math.log(candidate[1] / ratio)) < Math.abs(Math.log(best[1] / ratio))) best = candidate;
  return best[0];
}

/**
 * One image of the canonical request as a Gemini `generateContent` body: the prompt (after the images to edit, if
 * any, inline) as the user turn,
 * `responseModalities: ["IMAGE"]`, the size as the nearest aspect ratio. Gemini image models answer one image per
 * call, so the relay calls once per image wanted; `quality` has no Gemini equivalent and is dropped with a warning.
 */
export function buildImageGenerationBody(request: ImageGenerationRequest): JsonObject {
  const generationConfig: JsonObject = { responseModalities: ['IMAGE'] };
  const aspectRatio = aspectRatioFor(request.size);
  if (aspectRatio !== null) generationConfig.imageConfig = { aspectRatio };
  const images = (request.inputImages ?? []).map((image) => ({ inlineData: { mimeType: image.mimeType, data: image.base64 } }));
  return { contents: [{ role: 'user', parts: [...images, { text: request.prompt }] }], generationConfig };
}

/** `inlineData` image parts of every candidate → images; the block or finish reason when there are none. */
export function parseImageGenerationBody(body: Buffer): ImageGenerationResponse {
  const parsed = parseJson(body.toString('utf8'));
  if (!isJsonObject(parsed)) throw unreadableUpstreamBody();
  const images: GeneratedImage[] = [];
  let finishReason: string | null = null;
  const candidates = Array.isArray(parsed.candidates) ? parsed.candidates : [];
  for (const candidate of candidates) {
    if (!isJsonObject(candidate)) continue;
    if (typeof candidate.finishReason === 'string') finishReason = candidate.finishReason;
    const parts = isJsonObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) {
      const inline = isJsonObject(part) ? (part.inlineData ?? part.inline_data) : undefined;
      if (!isJsonObject(inline) || typeof inline.data !== 'string' || inline.data === '') continue;
      const mimeType = typeof inline.mimeType === 'string' ? inline.mimeType : typeof inline.mime_type === 'string' ? inline.mime_type : 'image/png';
      if (mimeType.startsWith('image/')) images.push({ base64: inline.data, mimeType });
    }
  }
  const response: ImageGenerationResponse = { images, usage: usageFromGemini(parsed.usageMetadata) };
  if (images.length === 0) {
    const feedback = isJsonObject(parsed.promptFeedback) && typeof parsed.promptFeedback.blockReason === 'string' ? parsed.promptFeedback.blockReason : null;
    response.refusal = feedback !== null ? `the prompt was blocked (${feedback})` : `the model returned no image (finish reason ${finishReason ?? 'none'})`;
  }
  return response;
}

/** Gemini channels generate images with their image models (`gemini-*-image*`) through `generateContent`. */
export const geminiMediaCapabilities: MediaCapabilities = {
  imageGeneration: {
    buildRequest(channel: Channel, credential: string, request: ImageGenerationRequest, upstreamModel: string): UpstreamRequest {
      return { url: geminiUrl(channel, upstreamModel, 'generateContent'), method: 'POST', headers: geminiHeaders(channel, credential), body: JSON.stringify(buildImageGenerationBody(request)) };
    },
    parseResponse: (body) => parseImageGenerationBody(body),
  },
};
