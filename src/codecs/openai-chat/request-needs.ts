import type { HostedToolOffer } from '../../ir/hosted-tool-offer.js';
import type { RequestNeeds } from '../../ir/request-needs.js';
import { isJsonObject } from '../../wire/json-object.js';

/** The content parts of OpenAI messages or Responses input items that carry an image, and those that carry other media. */
export function countMediaParts(items: unknown, imageType: string, mediaTypes: readonly string[]): { images: number; media: number } {
  const count = { images: 0, media: 0 };
  if (!Array.isArray(items)) return count;
  for (const item of items) {
    if (!isJsonObject(item) || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (!isJsonObject(part)) continue;
      if (part.type === imageType) count.images += 1;
      else if (typeof part.type === 'string' && mediaTypes.includes(part.type)) count.media += 1;
    }
  }
  return count;
}

/** The needs of an OpenAI chat body, read without decoding it (the pass-through path may never decode it). */
export function needsOfOpenAIChatBody(body: Record<string, unknown>): RequestNeeds {
  const { images, media } = countMediaParts(body.messages, 'image_url', ['file', 'input_audio']);
  const tools = (Array.isArray(body.tools) && body.tools.length > 0) || (Array.isArray(body.functions) && body.functions.length > 0);
  const format = body.response_format;
  return { tools, vision: images > 0, jsonSchema: isJsonObject(format) && format.type === 'json_schema', mediaParts: images + media };
}

/**
 * The web search an OpenAI chat body offers: `web_search_options` (searches as often as the model that answers runs
 * them, uncapped) or a search model by name (OpenAI's search models search once before every answer).
 */
export function hostedToolOfferOfOpenAIChatBody(body: Record<string, unknown>): HostedToolOffer {
  if (body.web_search_options !== undefined && body.web_search_options !== null) return { webSearch: null };
  return typeof body.model === 'string' && /-search-(preview|api)/.test(body.model) ? { webSearch: 1 } : {};
}
