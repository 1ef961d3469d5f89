import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { ContentPart } from '../../ir/message.js';
import { emptyUsage } from '../../ir/usage.js';
import { mapConverseStopReason } from '../../wire/bedrock/stop-reason.js';
import { usageFromConverse } from '../../wire/bedrock/usage.js';
import { isJsonObject } from '../../wire/json-object.js';

export function malformedConverseAnswer(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider answered with ${what}.`);
}

/** A Bedrock response id: Converse answers carry none in the body. */
export function converseResponseId(): string {
  return `msg_bdrk_${randomUUID().replace(/-/g, '')}`;
}

function parseBlock(block: Record<string, unknown>): ContentPart | null {
  if (typeof block.text === 'string') return { type: 'text', text: block.text };
  if (isJsonObject(block.toolUse)) {
    const use = block.toolUse;
    return { type: 'tool-call', id: typeof use.toolUseId === 'string' ? use.toolUseId : '', name: typeof use.name === 'string' ? use.name : '', argumentsJson: JSON.stringify(use.input ?? {}) };
  }
  if (isJsonObject(block.reasoningContent)) {
    const reasoning = block.reasoningContent;
    if (typeof reasoning.redactedContent === 'string') return { type: 'reasoning', text: '', redactedData: reasoning.redactedContent };
    if (isJsonObject(reasoning.reasoningText)) {
      const text = typeof reasoning.reasoningText.text === 'string' ? reasoning.reasoningText.text : '';
      const signature = reasoning.reasoningText.signature;
      return typeof signature === 'string' && signature !== '' ? { type: 'reasoning', text, signature } : { type: 'reasoning', text };
    }
  }
  return null;
}

/** A 2xx Converse body → canonical response. */
export function parseConverseResponse(body: Buffer, model: string): ChatResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw malformedConverseAnswer('a body that is not JSON');
  }
  if (!isJsonObject(parsed) || !isJsonObject(parsed.output)) throw malformedConverseAnswer('a body that is not a Converse answer');
  const message = isJsonObject(parsed.output.message) ? parsed.output.message : {};
  const blocks = Array.isArray(message.content) ? (message.content as unknown[]) : [];
  const content = blocks.flatMap((block) => {
    const part = isJsonObject(block) ? parseBlock(block) : null;
    return part === null ? [] : [part];
  });
  const hasToolCalls = content.some((part) => part.type === 'tool-call');
  return {
    id: converseResponseId(),
    model,
    created: Math.floor(Date.now() / 1000),
    content,
    finishReason: mapConverseStopReason(parsed.stopReason, hasToolCalls),
    usage: usageFromConverse(parsed.usage) ?? emptyUsage(),
    warnings: [],
  };
}
