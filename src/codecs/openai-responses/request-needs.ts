import type { RequestNeeds } from '../../ir/request-needs.js';
import { isJsonObject } from '../../wire/json-object.js';

/** The needs of a Responses API body, read without decoding it: function tools, input images and files, a JSON schema. */
export function needsOfResponsesBody(body: Record<string, unknown>): RequestNeeds {
  let images = 0;
  let files = 0;
  if (Array.isArray(body.input)) {
    for (const item of body.input) {
      if (!isJsonObject(item) || !Array.isArray(item.content)) continue;
      for (const part of item.content) {
        if (!isJsonObject(part)) continue;
        if (part.type === 'input_image') images += 1;
        else if (part.type === 'input_file' || part.type === 'input_audio') files += 1;
      }
    }
  }
  const tools = Array.isArray(body.tools) && body.tools.some((tool) => isJsonObject(tool) && tool.type === 'function');
  const format = isJsonObject(body.text) ? body.text.format : undefined;
  return { tools, vision: images > 0, jsonSchema: isJsonObject(format) && format.type === 'json_schema', mediaParts: images + files };
}
