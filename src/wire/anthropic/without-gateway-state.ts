import { isJsonObject, type JsonObject } from '../json-object.js';
import { withFields } from '../../shared/with-fields.js';
import { isGatewayState } from '../gateway-state.js';

/**
 * A Messages body for Anthropic itself, without the thinking blocks this gateway made (they carry another provider's
 * signature, which Anthropic refuses: "Invalid `signature` in `thinking` block"). Anthropic's own thinking and
 * redacted thinking stay as they came. The body itself when it holds no such block; otherwise a copy in which only
 * the changed messages are new.
 *
 * With manual thinking (`type: "enabled"`) Anthropic wants the last assistant turn of a tool loop to open with its
 * thinking block. When the left-out block was that one, thinking goes off for this request, as on the translated
 * path, with the context edits that require it (`clear_thinking_*`); adaptive thinking takes such a turn as it is.
 */
export function withoutGatewayThinking(body: JsonObject): JsonObject {
  const messages = body.messages;
  if (!Array.isArray(messages)) return body;
  let changed: unknown[] | null = null;
  messages.forEach((message: unknown, index) => {
    const content = isJsonObject(message) && message.role === 'assistant' && Array.isArray(message.content) ? message.content : null;
    if (content === null || !content.some(isGatewayThinking)) return;
    changed ??= [...messages];
    changed[index] = withFields(message as JsonObject, { content: content.filter((block) => !isGatewayThinking(block)) });
  });
  if (changed === null) return body;
  const rewritten = withFields(body, { messages: changed });
  return lostOpeningThinking(messages, changed) ? withoutManualThinking(rewritten) : rewritten;
}

function isGatewayThinking(block: unknown): boolean {
  return isJsonObject(block) && block.type === 'thinking' && isGatewayState(block.signature);
}

function opensWithThinking(content: unknown[]): boolean {
  const first = content[0];
  return isJsonObject(first) && (first.type === 'thinking' || first.type === 'redacted_thinking');
}

function hasToolUse(content: unknown[]): boolean {
  return content.some((block) => isJsonObject(block) && block.type === 'tool_use');
}

/** Whether the last assistant turn, a tool call, opened with thinking before and no longer does. */
function lostOpeningThinking(before: unknown[], after: unknown[]): boolean {
  for (let index = after.length - 1; index >= 0; index--) {
    const message = after[index];
    if (!isJsonObject(message) || message.role !== 'assistant') continue;
    const content = message.content;
    const original = (before[index] as JsonObject).content;
    if (!Array.isArray(content) || !Array.isArray(original) || !hasToolUse(content)) return false;
    return opensWithThinking(original) && !opensWithThinking(content);
  }
  return false;
}

function withoutManualThinking(body: JsonObject): JsonObject {
  if (!isJsonObject(body.thinking) || body.thinking.type !== 'enabled') return body;
  const { thinking: _thinking, context_management: management, ...rest } = body;
  if (management === undefined) return rest;
  if (!isJsonObject(management) || !Array.isArray(management.edits)) return { ...rest, context_management: management };
  const edits = management.edits.filter((edit: unknown) => !(isJsonObject(edit) && typeof edit.type === 'string' && edit.type.startsWith('clear_thinking')));
  if (edits.length === 0 && Object.keys(management).length === 1) return rest;
  return { ...rest, context_management: { ...management, edits } };
}
