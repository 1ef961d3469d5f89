import type { ChatCompletion, ChatCompletionMessage, ChatCompletionMessageFunctionToolCall } from 'openai/resources/chat/completions';
import type { ChatResponse } from '../../ir/chat-response.js';
import { openAICompletionId } from './completion-id.js';
import { encodeOpenAIFinishReason } from '../../wire/openai/finish-reason.js';
import { encodeOpenAIUsage } from '../../wire/openai/usage.js';

/**
 * The assistant message as this gateway sends it: OpenAI's, plus `reasoning_content` (the field DeepSeek, Qwen and
 * other OpenAI-compatible providers use) when the upstream returned reasoning text. OpenAI's own wire has no field
 * for reasoning text; clients that do not know `reasoning_content` ignore it.
 */
export type GatewayChatCompletionMessage = ChatCompletionMessage & { reasoning_content?: string };

/**
 * Gemini's thought signature of a call, where Google's OpenAI-compatible API writes it (and where clients that talk
 * to Gemini that way keep it and send it back): `extra_content.google.thought_signature` on the tool call.
 */
export interface GoogleExtraContent {
  extra_content?: { google: { thought_signature: string } };
}

export function googleExtraContent(signature: string | undefined): GoogleExtraContent {
  return signature === undefined || signature === '' ? {} : { extra_content: { google: { thought_signature: signature } } };
}

/** Arguments must be JSON text; a call without arguments says `{}`, as OpenAI's do. */
export function argumentsText(argumentsJson: string): string {
  return argumentsJson === '' ? '{}' : argumentsJson;
}

/**
 * Canonical response → `chat.completion` JSON text. `model` is the public model id the caller asked for. Text parts
 * are joined into `content` (null when the turn holds only tool calls); images and files have no place in an
 * assistant message on this wire and are left out.
 */
export function encodeOpenAIChatResponse(response: ChatResponse, model: string): string {
  let text = '';
  let reasoning = '';
  const toolCalls: Array<ChatCompletionMessageFunctionToolCall & GoogleExtraContent> = [];
  const annotations: ChatCompletionMessage.Annotation[] = [];
  for (const part of response.content) {
    if (part.type === 'text') {
      // Web sources the text cites (a hosted web search of another family), as OpenAI's url_citation annotations.
      for (const citation of part.citations ?? []) {
        annotations.push({
          type: 'url_citation',
          url_citation: { url: citation.url, title: citation.title ?? citation.url, start_index: text.length + (citation.startIndex ?? 0), end_index: text.length + (citation.endIndex ?? part.text.length) },
        });
      }
      text += part.text;
    }
    else if (part.type === 'reasoning') reasoning += part.text;
    else if (part.type === 'tool-call') {
      toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: argumentsText(part.argumentsJson) }, ...googleExtraContent(part.signature) });
    }
  }
  const message: GatewayChatCompletionMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
    annotations,
  };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const completion: ChatCompletion = {
    id: openAICompletionId(response.id),
    object: 'chat.completion',
    created: response.created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: encodeOpenAIFinishReason(response.finishReason, toolCalls.length > 0) }],
    usage: encodeOpenAIUsage(response.usage),
  };
  return JSON.stringify(completion);
}
