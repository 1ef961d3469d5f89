import type { HostedToolOffer } from '../../ir/hosted-tool-offer.js';
import type { RequestNeeds } from '../../ir/request-needs.js';
import { isJsonObject } from '../../wire/json-object.js';

/** The needs of an OpenAI chat body, read without decoding it (the pass-through path may never decode it). */
export function needsOfOpenAIChatBody(body: Record<string, unknown>): RequestNeeds {
  let images = 0;
  let files = 0;
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (!isJsonObject(message) || !Array.isArray(message.content)) continue;
      for (const part of message.content) {
        if (!isJsonObject(part)) continue;
        if (part.type === 'image_url') images += 1;
        else if (part.type === 'file' || part.type === 'input_audio') files += 1;
      }
    }
  }
  const tools = (Array.isArray(body.tools) && body.tools.length > 0) || (Array.isArray(body.functions) && body.functions.length > 0);
  const format = body.response_format;
  return { tools, vision: images > 0, jsonSchema: isJsonObject(format) && format.type === 'json_schema', mediaParts: images + files };
}

/**
 * The web search an OpenAI chat body offers: `web_search_options` (searches as often as the model that answers runs
 * them, uncapped) or a search model by name (OpenAI's search models search once before every answer).
 */
export function hostedToolOfferOfOpenAIChatBody(body: Record<string, unknown>): HostedToolOffer {
  if (body.web_search_options !== undefined && body.web_search_options !== null) return { webSearch: null };
  return typeof body.model === 'string' && /-search-(preview|api)/.test(body.model) ? { webSearch: 1 } : {};
}
