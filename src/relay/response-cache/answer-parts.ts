import type { FinishReason } from '../../ir/finish-reason.js';
import type { ContentPart, ReasoningPart, TextPart, ToolCallPart, WebSearchPart } from '../../ir/message.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Usage } from '../../ir/usage.js';
import type { CachedAnswer } from './cached-answer.js';

/** Content an answer can hold and a stream can carry; an answer with anything else is not cached. */
type AnswerPart = TextPart | ReasoningPart | ToolCallPart | WebSearchPart;

export function isReplayable(content: readonly ContentPart[]): content is AnswerPart[] {
  return content.every((part) => part.type === 'text' || part.type === 'reasoning' || part.type === 'tool-call' || part.type === 'web-search');
}

/**
 * Gathers a canonical stream into the answer it spells: blocks in the order they started, deltas joined, the last
 * usage reported. `answer()` is null unless the stream finished without an error and reported usage.
 */
export class AnswerCollector {
  readonly #content: AnswerPart[] = [];
  readonly #blocks = new Map<string, AnswerPart>();
  #usage: Usage | null = null;
  #finish: FinishReason | null = null;
  #failed = false;

  add(part: StreamPart): void {
    switch (part.type) {
      case 'response-start':
        return;
      case 'text-start':
        return this.#open(part.id, { type: 'text', text: '' });
      case 'reasoning-start':
        return this.#open(part.id, { type: 'reasoning', text: '' });
      case 'tool-input-start':
        return this.#open(part.id, { type: 'tool-call', id: part.toolCallId, name: part.toolName, argumentsJson: '', ...(part.signature === undefined ? {} : { signature: part.signature }) });
      case 'text-delta':
      case 'reasoning-delta': {
        const block = this.#blocks.get(part.id);
        if (block?.type === 'text' || block?.type === 'reasoning') block.text += part.delta;
        return;
      }
      case 'tool-input-delta': {
        const block = this.#blocks.get(part.id);
        if (block?.type === 'tool-call') block.argumentsJson += part.delta;
        return;
      }
      case 'text-end': {
        const block = this.#blocks.get(part.id);
        if (part.signature !== undefined && block?.type === 'text') block.signature = part.signature;
        return;
      }
      case 'tool-input-end':
        return;
      case 'reasoning-end': {
        const block = this.#blocks.get(part.id);
        if (block?.type !== 'reasoning') return;
        if (part.signature !== undefined) block.signature = part.signature;
        if (part.redactedData !== undefined) block.redactedData = part.redactedData;
        return;
      }
      case 'web-search':
        this.#content.push({ type: 'web-search', id: part.id, ...(part.query === undefined ? {} : { query: part.query }), sources: part.sources });
        return;
      case 'text-citation': {
        const block = this.#blocks.get(part.id);
        if (block?.type === 'text') (block.citations ??= []).push(part.citation);
        return;
      }
      case 'usage':
        this.#usage = part.usage;
        return;
      case 'finish':
        this.#finish = part.reason;
        if (part.usage !== null) this.#usage = part.usage;
        return;
      case 'error':
        this.#failed = true;
        return;
      default: {
        const unknown: never = part;
        throw new Error(`unknown stream part ${JSON.stringify(unknown)}`);
      }
    }
  }

  answer(): CachedAnswer | null {
    if (this.#failed || this.#finish === null || this.#usage === null) return null;
    return { content: this.#content, finishReason: this.#finish, usage: this.#usage };
  }

  #open(id: string, block: AnswerPart): void {
    if (this.#blocks.has(id)) return;
    this.#blocks.set(id, block);
    this.#content.push(block);
  }
}

/** A cached answer as the canonical stream an upstream would have sent, for the caller's stream encoder. */
export function answerStreamParts(answer: CachedAnswer, start: { id: string; model: string; created: number }): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'response-start', ...start }];
  let toolIndex = 0;
  answer.content.forEach((block, position) => {
    const id = `block_${position}`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text-start', id });
        if (block.text !== '') parts.push({ type: 'text-delta', id, delta: block.text });
        parts.push({ type: 'text-end', id, ...(block.signature === undefined ? {} : { signature: block.signature }) });
        for (const citation of block.citations ?? []) parts.push({ type: 'text-citation', id, citation });
        return;
      case 'reasoning':
        parts.push({ type: 'reasoning-start', id });
        if (block.text !== '') parts.push({ type: 'reasoning-delta', id, delta: block.text });
        parts.push({
          type: 'reasoning-end',
          id,
          ...(block.signature === undefined ? {} : { signature: block.signature }),
          ...(block.redactedData === undefined ? {} : { redactedData: block.redactedData }),
        });
        return;
      case 'tool-call':
        parts.push({ type: 'tool-input-start', id, toolCallId: block.id, toolName: block.name, index: toolIndex, ...(block.signature === undefined ? {} : { signature: block.signature }) });
        toolIndex += 1;
        if (block.argumentsJson !== '') parts.push({ type: 'tool-input-delta', id, delta: block.argumentsJson });
        parts.push({ type: 'tool-input-end', id });
        return;
      case 'web-search':
        parts.push({ type: 'web-search', id: block.id, ...(block.query === undefined ? {} : { query: block.query }), sources: block.sources });
        return;
      default:
        // Only replayable answers are stored (isReplayable).
        return;
    }
  });
  parts.push({ type: 'usage', usage: answer.usage }, { type: 'finish', reason: answer.finishReason, usage: answer.usage });
  return parts;
}
