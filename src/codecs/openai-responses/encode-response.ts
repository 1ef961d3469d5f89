import type { ChatResponse } from '../../ir/chat-response.js';
import { encodeReasoningToken } from './reasoning-token.js';
import { echoOf, itemId, responseId, responseObject, statusOf, type OutputItem, type OutputText } from './response-object.js';
import { encodeResponsesUsage } from './responses-usage.js';
import type { JsonObject } from './wire-values.js';

/** Arguments must be JSON text; a call without arguments says `{}`, as OpenAI's do. */
export function argumentsText(argumentsJson: string): string {
  return argumentsJson === '' ? '{}' : argumentsJson;
}

export function outputText(text: string): OutputText {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/**
 * Canonical content → output items in order: reasoning parts become reasoning items (their provider state in
 * `encrypted_content`), consecutive text parts one assistant message, tool calls function_call items. Images and
 * files have no place in a model's output on this wire and are left out.
 */
export function outputItemsOf(response: ChatResponse): OutputItem[] {
  const items: OutputItem[] = [];
  let message: Extract<OutputItem, { type: 'message' }> | null = null;
  for (const part of response.content) {
    if (part.type === 'text') {
      if (message === null) {
        message = { id: itemId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [] };
        items.push(message);
      }
      message.content.push(outputText(part.text));
      continue;
    }
    message = null;
    if (part.type === 'reasoning') {
      const token = encodeReasoningToken(part);
      const item: OutputItem = { id: itemId('rs'), type: 'reasoning', summary: part.text === '' ? [] : [{ type: 'summary_text', text: part.text }] };
      if (token !== null) item.encrypted_content = token;
      items.push(item);
    } else if (part.type === 'tool-call') {
      items.push({ id: itemId('fc'), type: 'function_call', status: 'completed', call_id: part.id, name: part.name, arguments: argumentsText(part.argumentsJson) });
    }
  }
  return items;
}

/** Canonical response → the Responses `response` object as JSON text; `body` is the caller's request (echoed fields). */
export function encodeResponsesResponse(response: ChatResponse, model: string, body: JsonObject): string {
  const { status, incomplete_details } = statusOf(response.finishReason);
  return JSON.stringify(responseObject({
    id: responseId(response.id),
    createdAt: response.created,
    model,
    status,
    output: outputItemsOf(response),
    usage: encodeResponsesUsage(response.usage),
    error: null,
    incompleteDetails: incomplete_details,
    completedAt: Math.floor(Date.now() / 1000),
  }, echoOf(body)));
}
