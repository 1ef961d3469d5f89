import type { ChatRequest } from '../ir/chat-request.js';

/**
 * For upstreams without a positional system message: the request with every `system` message appended, in order,
 * to the system prompt, and removed from the conversation. Returns the request itself when it has none.
 */
export function hoistSystemMessages(request: ChatRequest): ChatRequest {
  if (!request.messages.some((message) => message.role === 'system')) return request;
  const system = [...request.system];
  const messages = [];
  for (const message of request.messages) {
    if (message.role !== 'system') {
      messages.push(message);
      continue;
    }
    for (const part of message.content) if (part.type === 'text' && part.text !== '') system.push(part);
  }
  return { ...request, system, messages };
}
