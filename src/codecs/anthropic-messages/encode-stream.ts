import type { StreamEncoder, StreamEncoderOptions } from '../client-codec.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Usage } from '../../ir/usage.js';
import { contentBlockDeltaEvent, contentBlockStopEvent, MESSAGE_STOP_EVENT, sseEvent } from '../../wire/anthropic/anthropic-wire.js';
import { anthropicErrorBody } from './encode-error.js';
import { signatureOfNextBlock } from '../carried-signature.js';
import { anthropicCitation, anthropicMessageId, webSearchBlocks } from './encode-response.js';
import type { Citation } from '../../ir/message.js';
import { anthropicStopReason } from '../../wire/anthropic/stop-reason.js';
import { usageToAnthropic } from '../../wire/anthropic/usage.js';

type BlockPart = Extract<
  StreamPart,
  { type: 'text-delta' | 'text-end' | 'reasoning-delta' | 'reasoning-end' | 'tool-input-delta' | 'tool-input-end' }
>;
type StartPart = Extract<StreamPart, { type: 'text-start' | 'reasoning-start' | 'tool-input-start' }>;

interface Block {
  start: StartPart;
  /** Parts that arrived while another block was open on the wire. */
  buffered: BlockPart[];
  /** Anthropic's block index, once its content_block_start was written. */
  index: number | null;
}

/**
 * Canonical stream parts → Anthropic's SSE events, in the order Anthropic sends them and the SDK's
 * `finalMessage()` accepts: message_start, then one content block at a time (start, deltas, stop; indexes 0, 1, …),
 * message_delta with the stop reason and cumulative usage, message_stop.
 *
 * - message_start is written once the part after `response-start` is known, so an upstream's early usage
 *   (Anthropic's own message_start) lands in it; usage known only at the end goes into message_delta, whose
 *   input and cache counters the SDK takes over.
 * - Anthropic never interleaves blocks; interleaved canonical blocks (parallel tool inputs) are queued and written
 *   one after the other.
 * - A thinking block's start waits for its first delta or its end, since a redacted block is only known then; a
 *   text block's waits for its first text, so a block that holds nothing (only a signature) writes nothing.
 * - An answer ends with its text or tool use, as Anthropic's do: a signature of a tool call (Gemini's) goes before
 *   it, on the thinking block before it when that one has no signature yet (its stop waits for the next block),
 *   else on an empty thinking block (see carried-signature.ts). A signature known only after the text was written
 *   (Gemini's on streamed text) has no place before that text and is not carried.
 */
export class AnthropicStreamEncoder implements StreamEncoder {
  readonly #model: string;
  #pendingStart: { id: string } | null = null;
  #messageStarted = false;
  #finished = false;
  #usage: Usage | null = null;
  #blocks = new Map<string, Block>();
  #current: Block | null = null;
  /** A thinking block written but for its signature and stop, which wait for the block after it. */
  #unsigned: Block | null = null;
  #queue: Block[] = [];
  #nextIndex = 0;
  #sawToolUse = false;
  #searches: Array<Extract<StreamPart, { type: 'web-search' }>> = [];

  constructor(options: StreamEncoderOptions) {
    this.#model = options.model;
  }

  encode(part: StreamPart): string {
    if (this.#finished) return '';
    switch (part.type) {
      case 'response-start':
        if (!this.#messageStarted && this.#pendingStart === null) this.#pendingStart = { id: part.id };
        return '';
      case 'usage':
        this.#usage = part.usage;
        return this.#pendingStart !== null ? this.#writeMessageStart() : '';
      case 'text-start':
      case 'reasoning-start':
      case 'tool-input-start':
        return this.#ensureMessageStart() + this.#startBlock(part);
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-input-delta':
      case 'text-end':
      case 'reasoning-end':
      case 'tool-input-end':
        return this.#ensureMessageStart() + this.#blockPart(part);
      case 'finish': {
        if (part.usage !== null) this.#usage = part.usage;
        const out = this.#ensureMessageStart() + this.#closeAll() + this.#flushSearches() + this.#release();
        this.#finished = true;
        const usage = this.#usage === null ? { output_tokens: 0 } : usageToAnthropic(this.#usage);
        return (
          out +
          sseEvent('message_delta', {
            type: 'message_delta',
            delta: { stop_reason: anthropicStopReason(part.reason, this.#sawToolUse), stop_sequence: null },
            usage,
          }) +
          MESSAGE_STOP_EVENT
        );
      }
      case 'web-search':
        // Written between blocks: at once when none is open, else when the open ones are done.
        this.#searches.push(part);
        return this.#ensureMessageStart() + (this.#current === null ? this.#flushSearches() : '');
      case 'text-citation':
        return this.#cite(part.id, part.citation);
      case 'error': {
        // A started message keeps its message_start; an error before any response-start stands alone.
        const out = this.#writeMessageStart() + this.#release();
        this.#finished = true;
        return out + sseEvent('error', anthropicErrorBody(part.status, part.code, part.message));
      }
      default: {
        const unknown: never = part;
        throw new Error(`unknown stream part ${String(unknown)}`);
      }
    }
  }

  end(): string {
    return '';
  }

  #ensureMessageStart(): string {
    if (this.#messageStarted) return '';
    if (this.#pendingStart === null) this.#pendingStart = { id: `gen_${Date.now().toString(36)}` };
    return this.#writeMessageStart();
  }

  #writeMessageStart(): string {
    const pending = this.#pendingStart;
    if (pending === null || this.#messageStarted) return '';
    this.#pendingStart = null;
    this.#messageStarted = true;
    const usage = this.#usage === null
      ? { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 }
      : usageToAnthropic(this.#usage);
    // As Anthropic does, the output breakdown comes with the final counts in message_delta only.
    delete usage.output_tokens_details;
    return sseEvent('message_start', {
      type: 'message_start',
      message: {
        id: anthropicMessageId(pending.id),
        type: 'message',
        role: 'assistant',
        model: this.#model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    });
  }

  #startBlock(part: StartPart): string {
    if (this.#blocks.has(part.id)) return '';
    const block: Block = { start: part, buffered: [], index: null };
    this.#blocks.set(part.id, block);
    if (this.#current !== null) {
      this.#queue.push(block);
      return '';
    }
    return this.#open(block);
  }

  #blockPart(part: BlockPart): string {
    const block = this.#blocks.get(part.id);
    if (block === undefined) return '';
    if (block !== this.#current) {
      block.buffered.push(part);
      return '';
    }
    return this.#apply(block, part);
  }

  #open(block: Block): string {
    this.#current = block;
    const start = block.start;
    // Thinking waits: a redacted block shows itself only at its end. Text waits for its first text.
    if (start.type === 'reasoning-start' || start.type === 'text-start') return '';
    this.#sawToolUse = true;
    return this.#carry(start.signature) + this.#writeBlockStart(block, { type: 'tool_use', id: start.toolCallId, name: start.toolName, input: {} });
  }

  #writeBlockStart(block: Block, contentBlock: Record<string, unknown>): string {
    const out = this.#release();
    const index = this.#nextIndex++;
    block.index = index;
    return out + sseEvent('content_block_start', { type: 'content_block_start', index, content_block: contentBlock });
  }

  #writeTextStart(block: Block): string {
    return block.index === null ? this.#writeBlockStart(block, { type: 'text', text: '' }) : '';
  }

  /** A signature of the block about to start, on the thinking block that waits for it, else on an empty one. */
  #carry(signature: string | undefined): string {
    if (signature === undefined || signature === '') return '';
    const carried = signatureOfNextBlock(signature);
    if (this.#unsigned !== null) return this.#release(carried);
    const index = this.#nextIndex++;
    return sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }) +
      sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: carried } }) +
      contentBlockStopEvent(index);
  }

  /** Ends the thinking block that waited for the next one, with the signature that block carries to it if any. */
  #release(signature?: string): string {
    const block = this.#unsigned;
    if (block === null) return '';
    this.#unsigned = null;
    const delta = signature === undefined ? '' : contentBlockDeltaEvent(block.index, 'signature_delta', signature);
    return delta + contentBlockStopEvent(block.index);
  }

  #delta(block: Block, delta: Record<string, unknown>): string {
    return sseEvent('content_block_delta', { type: 'content_block_delta', index: block.index, delta });
  }

  #apply(block: Block, part: BlockPart): string {
    switch (part.type) {
      case 'text-delta':
        return part.delta === '' ? '' : this.#writeTextStart(block) + contentBlockDeltaEvent(block.index, 'text_delta', part.delta);
      case 'tool-input-delta':
        return part.delta === '' ? '' : contentBlockDeltaEvent(block.index, 'input_json_delta', part.delta);
      case 'reasoning-delta': {
        if (part.delta === '') return '';
        const start = block.index === null ? this.#writeBlockStart(block, { type: 'thinking', thinking: '', signature: '' }) : '';
        return start + contentBlockDeltaEvent(block.index, 'thinking_delta', part.delta);
      }
      case 'reasoning-end': {
        if (block.index === null && part.redactedData !== undefined) {
          return this.#writeBlockStart(block, { type: 'redacted_thinking', data: part.redactedData }) + this.#stop(block);
        }
        if (part.signature === undefined || part.signature === '') {
          // Unsigned thoughts may yet carry the signature of the block after them; empty ones are left out.
          if (block.index !== null) this.#unsigned = block;
          return this.#advance();
        }
        const start = block.index === null ? this.#writeBlockStart(block, { type: 'thinking', thinking: '', signature: '' }) : '';
        return start + contentBlockDeltaEvent(block.index, 'signature_delta', part.signature) + this.#stop(block);
      }
      case 'text-end':
        // A block that never wrote text was never started. Its signature, if any, came after its text.
        return block.index === null ? this.#advance() : this.#stop(block);
      case 'tool-input-end':
        return this.#stop(block);
      default: {
        const unknown: never = part;
        throw new Error(`unknown block part ${String(unknown)}`);
      }
    }
  }

  /** Closes the current block and opens the queued ones. */
  #stop(block: Block): string {
    return contentBlockStopEvent(block.index) + this.#advance();
  }

  /** Opens the queued blocks, replaying what they buffered, once the current one is done. */
  #advance(): string {
    let out = '';
    this.#current = null;
    while (this.#current === null) {
      const next = this.#queue.shift();
      if (next === undefined) break;
      out += this.#open(next);
      const buffered = next.buffered;
      next.buffered = [];
      for (const part of buffered) out += this.#apply(next, part);
    }
    if (this.#current === null) out += this.#flushSearches();
    return out;
  }

  /** Searches another provider ran, as Anthropic's server_tool_use and web_search_tool_result blocks. */
  #flushSearches(): string {
    if (this.#searches.length === 0) return '';
    let out = this.#release();
    for (const search of this.#searches.splice(0)) {
      for (const block of webSearchBlocks(search)) {
        const index = this.#nextIndex++;
        if (block.type === 'server_tool_use') {
          out += sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } });
          out += sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
        } else {
          out += sseEvent('content_block_start', { type: 'content_block_start', index, content_block: block });
        }
        out += contentBlockStopEvent(index);
      }
    }
    return out;
  }

  /** A citation of the text block being written, as Anthropic's citations_delta; other blocks' are left out. */
  #cite(id: string, citation: Citation): string {
    const block = this.#blocks.get(id);
    if (block === undefined || block !== this.#current || block.start.type !== 'text-start') return '';
    return this.#writeTextStart(block) + this.#delta(block, { type: 'citations_delta', citation: anthropicCitation(citation, '') });
  }

  /** At the finish, blocks left open are ended as they stand. */
  #closeAll(): string {
    let out = '';
    while (this.#current !== null) {
      const block = this.#current;
      out += this.#apply(block, endOf(block.start));
    }
    return out;
  }
}

function endOf(start: StartPart): BlockPart {
  switch (start.type) {
    case 'text-start':
      return { type: 'text-end', id: start.id };
    case 'reasoning-start':
      return { type: 'reasoning-end', id: start.id };
    case 'tool-input-start':
      return { type: 'tool-input-end', id: start.id };
    default: {
      const unknown: never = start;
      throw new Error(`unknown block start ${String(unknown)}`);
    }
  }
}
