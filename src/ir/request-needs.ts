import type { ChatRequest } from './chat-request.js';

/** What a chat request needs of the model that answers it, read before routing. */
export interface RequestNeeds {
  tools: boolean;
  vision: boolean;
  jsonSchema: boolean;
  /** Image and file parts: each may cost far more tokens than its bytes in the body. */
  mediaParts: number;
}

export const NO_NEEDS: RequestNeeds = { tools: false, vision: false, jsonSchema: false, mediaParts: 0 };

/** The needs of a canonical request (any protocol). */
export function needsOfChat(request: ChatRequest): RequestNeeds {
  let images = 0;
  let files = 0;
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === 'image') images += 1;
      else if (part.type === 'file') files += 1;
      else if (part.type === 'tool-result') for (const inner of part.content) if (inner.type === 'image') images += 1;
    }
  }
  return { tools: (request.tools ?? []).length > 0, vision: images > 0, jsonSchema: request.responseFormat?.kind === 'json-schema', mediaParts: images + files };
}
