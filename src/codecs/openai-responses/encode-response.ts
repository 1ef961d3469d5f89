import type { ChatResponse } from '../../ir/chat-response.js';
import { encodeReasoningToken } from './reasoning-token.js';
import { signatureOfNextBlock } from '../carried-signature.js';
import type { Citation } from '../../ir/message.js';
import { echoOf, itemId, responseId, responseObject, statusOf, type OutputItem, type OutputText, type UrlCitation, type WebSearchAction } from './response-object.js';
import { encodeResponsesUsage } from '../../wire/responses/usage.js';
import type { ToolNamespaces } from './tool-namespaces.js';
import type { JsonObject } from './wire-values.js';

/** A function_call item, with the namespace and name the caller gave a namespaced tool. */
export function functionCallItem(id: string, status: 'in_progress' | 'completed', callId: string, flatName: string, argumentsJson: string, namespaces: ToolNamespaces | null): Extract<OutputItem, { type: 'function_call' }> {
  const member = namespaces?.member(flatName) ?? null;
  return member === null
    ? { id, type: 'function_call', status, call_id: callId, name: flatName, arguments: argumentsJson }
    : { id, type: 'function_call', status, call_id: callId, namespace: member.namespace, name: member.name, arguments: argumentsJson };
}

/** Arguments must be JSON text; a call without arguments says `{}`, as OpenAI's do. */
export function argumentsText(argumentsJson: string): string {
  return argumentsJson === '' ? '{}' : argumentsJson;
}

export function outputText(text: string, citations: readonly Citation[] = []): OutputText {
  return { type: 'output_text', text, annotations: citations.map((citation) => urlCitation(citation, text.length)), logprobs: [] };
}

/** A canonical citation as OpenAI's url_citation; one without a span cites the whole text. */
export function urlCitation(citation: Citation, textLength: number): UrlCitation {
  return {
    type: 'url_citation',
    start_index: citation.startIndex ?? 0,
    end_index: citation.endIndex ?? textLength,
    url: citation.url,
    title: citation.title ?? citation.url,
  };
}

/** A finished search as a web_search_call item. */
export function webSearchItem(id: string, query: string | undefined, sources: ReadonlyArray<{ url: string }>, includeSources: boolean): OutputItem {
  const action: WebSearchAction = { type: 'search' };
  if (query !== undefined) action.query = query;
  if (includeSources) action.sources = sources.map((source) => ({ type: 'url', url: source.url }));
  return { id, type: 'web_search_call', status: 'completed', action };
}

/** Whether the request asked for the sources of web searches (`include: ["web_search_call.action.sources"]`). */
export function wantsSearchSources(body: JsonObject): boolean {
  return Array.isArray(body.include) && body.include.includes('web_search_call.action.sources');
}

/**
 * Canonical content → output items in order: reasoning parts become reasoning items (their provider state in
 * `encrypted_content`), consecutive text parts one assistant message, tool calls function_call items. Images and
 * files have no place in a model's output on this wire and are left out. The signature of a text or tool call
 * (Gemini's) goes before it, as OpenAI places reasoning: on the reasoning item before it when that one has no state
 * of its own, else on an empty reasoning item (see carried-signature.ts); empty text (at most a signature) is left
 * out, so the output ends with the answer's message or call.
 */
export function outputItemsOf(response: ChatResponse, namespaces: ToolNamespaces | null = null, includeSources = false): OutputItem[] {
  const items: OutputItem[] = [];
  let message: Extract<OutputItem, { type: 'message' }> | null = null;
  for (const part of response.content) {
    if (part.type === 'text' && part.text === '') continue;
    if ((part.type === 'text' || part.type === 'tool-call') && part.signature !== undefined && part.signature !== '') {
      carrySignature(items, part.signature);
      message = null;
    }
    if (part.type === 'text') {
      if (message === null) {
        message = { id: itemId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [] };
        items.push(message);
      }
      message.content.push(outputText(part.text, part.citations));
      continue;
    }
    message = null;
    if (part.type === 'reasoning') {
      const token = encodeReasoningToken(part);
      // Reasoning with neither text nor state shows nothing.
      if (token === null && part.text === '') continue;
      const item: OutputItem = { id: itemId('rs'), type: 'reasoning', summary: part.text === '' ? [] : [{ type: 'summary_text', text: part.text }] };
      if (token !== null) item.encrypted_content = token;
      items.push(item);
    } else if (part.type === 'tool-call') {
      items.push(functionCallItem(itemId('fc'), 'completed', part.id, part.name, argumentsText(part.argumentsJson), namespaces));
    } else if (part.type === 'web-search') {
      items.push(webSearchItem(itemId('ws'), part.query, part.sources, includeSources));
    }
  }
  return items;
}

/** A signature of the next item, on the reasoning item before it when that one carries nothing, else on a new one. */
function carrySignature(items: OutputItem[], signature: string): OutputItem {
  const before = items.at(-1);
  if (before?.type === 'reasoning' && (before.encrypted_content ?? null) === null) {
    before.encrypted_content = signatureOfNextBlock(signature);
    return before;
  }
  const carrier: OutputItem = { id: itemId('rs'), type: 'reasoning', summary: [], encrypted_content: signatureOfNextBlock(signature) };
  items.push(carrier);
  return carrier;
}

/** Canonical response → the Responses `response` object as JSON text; `body` is the caller's request (echoed fields). */
export function encodeResponsesResponse(response: ChatResponse, model: string, body: JsonObject, namespaces: ToolNamespaces | null = null): string {
  const { status, incomplete_details } = statusOf(response.finishReason);
  return JSON.stringify(responseObject({
    id: responseId(response.id),
    createdAt: response.created,
    model,
    status,
    output: outputItemsOf(response, namespaces, wantsSearchSources(body)),
    usage: encodeResponsesUsage(response.usage),
    error: null,
    incompleteDetails: incomplete_details,
    completedAt: Math.floor(Date.now() / 1000),
  }, echoOf(body)));
}
