import type { HostedToolOffer } from '../../ir/hosted-tool-offer.js';
import type { RequestNeeds } from '../../ir/request-needs.js';
import { isJsonObject } from '../../wire/json-object.js';
import { countMediaParts } from '../openai-chat/request-needs.js';

/** The needs of a Responses API body, read without decoding it: function tools, input images and files, a JSON schema. */
export function needsOfResponsesBody(body: Record<string, unknown>): RequestNeeds {
  const { images, media } = countMediaParts(body.input, 'input_image', ['input_file', 'input_audio']);
  const tools = Array.isArray(body.tools) && body.tools.some((tool) => isJsonObject(tool) && tool.type === 'function');
  const format = isJsonObject(body.text) ? body.text.format : undefined;
  return { tools, vision: images > 0, jsonSchema: isJsonObject(format) && format.type === 'json_schema', mediaParts: images + media };
}

/**
 * The tools OpenAI bills per call that a Responses body offers: web search (`web_search`, `web_search_preview`, …) and
 * file search, each capped by `max_tool_calls` when the request sets it.
 */
export function hostedToolOfferOfResponsesBody(body: Record<string, unknown>): HostedToolOffer {
  const offer: HostedToolOffer = {};
  if (!Array.isArray(body.tools)) return offer;
  const cap = typeof body.max_tool_calls === 'number' ? body.max_tool_calls : null;
  for (const tool of body.tools) {
    if (!isJsonObject(tool) || typeof tool.type !== 'string') continue;
    if (tool.type.startsWith('web_search')) offer.webSearch = cap;
    else if (tool.type === 'file_search') offer.fileSearch = cap;
  }
  return offer;
}
