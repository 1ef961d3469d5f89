import { isJsonObject, type JsonObject } from '../../wire/json-object.js';
import { usageOfChatCompletion } from '../../wire/openai/usage.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { ContentPart, ToolCallPart } from '../../ir/message.js';
import { emptyUsage } from '../../ir/usage.js';
import { generateToolCallId } from './generate-tool-call-id.js';
import { mapOpenAIFinishReason } from '../../wire/openai/finish-reason.js';
import { describeUpstreamError, malformedUpstreamAnswer } from './upstream-wire-error.js';

/**
 * Reasoning text of an OpenAI-compatible message or delta: `reasoning_content` (DeepSeek, Qwen, vLLM, this gateway)
 * or `reasoning` (OpenRouter, Ollama). OpenAI's own chat wire returns none.
 */
export function reasoningTextOf(fields: JsonObject): string {
  if (typeof fields.reasoning_content === 'string') return fields.reasoning_content;
  return typeof fields.reasoning === 'string' ? fields.reasoning : '';
}

/** `content` as a string, or (some compatible providers) an array of text parts. */
export function contentTextOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (isJsonObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function toolCallsOf(message: JsonObject): ToolCallPart[] {
  const calls: ToolCallPart[] = [];
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls as unknown[]) {
      if (!isJsonObject(call) || !isJsonObject(call.function) || typeof call.function.name !== 'string') continue;
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : generateToolCallId();
      const args = call.function.arguments;
      calls.push({ type: 'tool-call', id, name: call.function.name, argumentsJson: typeof args === 'string' ? args : isJsonObject(args) ? JSON.stringify(args) : '' });
    }
  }
  const legacy = message.function_call;
  if (isJsonObject(legacy) && typeof legacy.name === 'string') {
    calls.push({ type: 'tool-call', id: generateToolCallId(), name: legacy.name, argumentsJson: typeof legacy.arguments === 'string' ? legacy.arguments : '' });
  }
  return calls;
}

/**
 * A 2xx chat-completion body → canonical response (first choice; the translated path never asks for more). Reasoning
 * text comes first, then the text (a refusal reads as text), then tool calls. Anything that is not a chat completion
 * is a GatewayError, so the relay may try the next channel.
 */
export function parseOpenAIChatResponse(body: Buffer): ChatResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw malformedUpstreamAnswer('a body that is not JSON');
  }
  if (!isJsonObject(parsed)) throw malformedUpstreamAnswer('a body that is not a chat completion');
  if (parsed.error !== undefined && parsed.error !== null) throw new GatewayError('upstream_error', describeUpstreamError(parsed.error).message);
  const choice = Array.isArray(parsed.choices) ? (parsed.choices as unknown[])[0] : undefined;
  if (!isJsonObject(choice)) throw malformedUpstreamAnswer('a chat completion without choices');
  const message = isJsonObject(choice.message) ? choice.message : {};
  const content: ContentPart[] = [];
  const reasoning = reasoningTextOf(message);
  if (reasoning !== '') content.push({ type: 'reasoning', text: reasoning });
  const text = contentTextOf(message.content);
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  if (text !== '' || refusal !== '') content.push({ type: 'text', text: text !== '' ? text : refusal });
  const toolCalls = toolCallsOf(message);
  content.push(...toolCalls);
  return {
    id: typeof parsed.id === 'string' ? parsed.id : '',
    model: typeof parsed.model === 'string' ? parsed.model : '',
    created: typeof parsed.created === 'number' ? parsed.created : Math.floor(Date.now() / 1000),
    content,
    finishReason: mapOpenAIFinishReason(choice.finish_reason, toolCalls.length > 0),
    usage: usageOfChatCompletion(parsed) ?? emptyUsage(),
    warnings: [],
  };
}
