import type { RequestNeeds } from '../../ir/request-needs.js';

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';

/** The needs of a Responses API body, read without decoding it: function tools, input images and files, a JSON schema. */
export function needsOfResponsesBody(body: Record<string, unknown>): RequestNeeds {
  let images = 0;
  let files = 0;
  if (Array.isArray(body.input)) {
    for (const item of body.input) {
      if (!isObject(item) || !Array.isArray(item.content)) continue;
      for (const part of item.content) {
        if (!isObject(part)) continue;
        if (part.type === 'input_image') images += 1;
        else if (part.type === 'input_file' || part.type === 'input_audio') files += 1;
      }
    }
  }
  const tools = Array.isArray(body.tools) && body.tools.some((tool) => isObject(tool) && tool.type === 'function');
  const format = isObject(body.text) ? body.text.format : undefined;
  return { tools, vision: images > 0, jsonSchema: isObject(format) && format.type === 'json_schema', mediaParts: images + files };
}
