import type { GatewayError } from '../../errors/gateway-error.js';
import type { FinishReason } from '../../ir/finish-reason.js';
import type { StreamPart } from '../../ir/stream-part.js';
import { emptyUsage, type Usage } from '../../ir/usage.js';
import type { StreamEncoder } from '../client-codec.js';
import { openAIErrorType } from '../openai-chat/encode-stream.js';
import type { Citation } from '../../ir/message.js';
import { argumentsText, functionCallItem, outputText, urlCitation, webSearchItem } from './encode-response.js';
import type { ToolNamespaces } from './tool-namespaces.js';
import { encodeReasoningToken } from './reasoning-token.js';
import { signatureOfNextBlock } from '../carried-signature.js';
import { itemId, responseId, responseObject, statusOf, type OutputItem, type ResponseEcho, type ResponseState } from './response-object.js';
import { encodeResponsesUsage } from '../../wire/responses/usage.js';

/** One open output item, keyed by the canonical block id. */
interface OpenBlock {
  item: OutputItem;
  outputIndex: number;
  text: string;
  /** Reasoning: the summary part was announced (on the first delta). */
  announced: boolean;
  /** Message: the sources its text cites, turned into annotations when the text is complete. */
  citations: Citation[];
}

/** A Responses server-sent event: the `event:` line names the type, which the JSON repeats. */
export function responsesEvent(type: string, sequenceNumber: number, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequenceNumber, ...payload })}\n\n`;
}

/**
 * The Responses `error` event, in both shapes clients read: flat `code`/`message` (OpenAI's documented event) and a
 * nested `error` object, which makes the openai SDKs raise an APIError instead of yielding the event silently.
 */
export function responsesErrorEvent(sequenceNumber: number, status: number, code: string, message: string): string {
  return responsesEvent('error', sequenceNumber, { code, message, param: null, error: { type: openAIErrorType(status), code, message, param: null } });
}

/**
 * Canonical stream parts → the Responses event sequence: response.created and response.in_progress; per block
 * response.output_item.added, its deltas (output_text / function_call_arguments / reasoning_summary_text) and done
 * events, response.output_item.done; then response.completed (or response.incomplete) with the whole response and
 * usage. Every event carries a running sequence_number; output_index counts items, content_index/summary_index
 * are 0 (one part per item). An upstream failure becomes response.failed followed by an error event.
 *
 * The output ends with the answer's message or call, as OpenAI's does: an item is added once its block has
 * something to show (text; for reasoning, text or state), so a block of only a late signature adds none; and the
 * signature of a call (Gemini's) goes before it, in the reasoning item before it when that one has no state of its
 * own (its done events wait for the next item), else in an empty reasoning item (see carried-signature.ts). A
 * signature known only after the text was written (Gemini's on streamed text) has no place before that text and is
 * not carried.
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  #sequence = 0;
  #started = false;
  #closed = false;
  #usage: Usage | null = null;
  readonly #blocks = new Map<string, OpenBlock>();
  /** Message items already done, by canonical block id, for citations that arrive after their text. */
  readonly #closedMessages = new Map<string, { item: OutputItem; outputIndex: number }>();
  /** Blocks started whose item waits for something to show: text for a message, text or state for reasoning. */
  readonly #pending = new Map<string, 'message' | 'reasoning'>();
  /** A reasoning item complete but for its state, whose done events wait for the item after it. */
  #unsigned: OpenBlock | null = null;
  readonly #state: ResponseState;

  constructor(
    model: string,
    private readonly echo: ResponseEcho,
    private readonly namespaces: ToolNamespaces | null = null,
    private readonly includeSources = false,
  ) {
    this.#state = { id: responseId(''), createdAt: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [], usage: null, error: null, incompleteDetails: null, completedAt: null };
  }

  encode(part: StreamPart): string {
    if (this.#closed) return '';
    switch (part.type) {
      case 'response-start':
        if (!this.#started) {
          this.#state.id = responseId(part.id);
          this.#state.createdAt = part.created;
        }
        return this.#start();
      case 'text-start':
        if (!this.#blocks.has(part.id)) this.#pending.set(part.id, 'message');
        return this.#start();
      case 'text-delta': {
        if (part.delta === '') return '';
        const { block, events } = this.#openPending(part.id, 'message');
        block.text += part.delta;
        return events + this.#event('response.output_text.delta', { item_id: block.item.id, output_index: block.outputIndex, content_index: 0, delta: part.delta, logprobs: [] });
      }
      case 'reasoning-start':
        if (!this.#blocks.has(part.id)) this.#pending.set(part.id, 'reasoning');
        return this.#start();
      case 'reasoning-delta': {
        if (part.delta === '') return '';
        const { block, events } = this.#openPending(part.id, 'reasoning');
        let out = events;
        if (!block.announced) {
          block.announced = true;
          out += this.#event('response.reasoning_summary_part.added', { item_id: block.item.id, output_index: block.outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } });
        }
        block.text += part.delta;
        return out + this.#event('response.reasoning_summary_text.delta', { item_id: block.item.id, output_index: block.outputIndex, summary_index: 0, delta: part.delta });
      }
      case 'reasoning-end': {
        if (!this.#pending.has(part.id) && !this.#blocks.has(part.id)) return '';
        const token = encodeReasoningToken(part);
        // Reasoning with neither text nor state shows nothing and adds no item.
        if (this.#pending.has(part.id) && token === null) {
          this.#pending.delete(part.id);
          return '';
        }
        const { block, events: added } = this.#openPending(part.id, 'reasoning');
        if (block.item.type !== 'reasoning') return added;
        if (token !== null) {
          block.item.encrypted_content = token;
          return added + this.#close(part.id, block);
        }
        // Reasoning without state of its own may yet carry the signature of the item after it.
        const released = this.#release();
        this.#blocks.delete(part.id);
        this.#unsigned = block;
        return released;
      }
      case 'tool-input-start': {
        if (this.#blocks.has(part.id)) return '';
        const carried = part.signature === undefined || part.signature === '' ? '' : this.#carry(part.signature);
        const item: OutputItem = functionCallItem(itemId('fc'), 'in_progress', part.toolCallId, part.toolName, '', this.namespaces);
        return carried + this.#add(part.id, item);
      }
      case 'tool-input-delta': {
        const block = this.#blocks.get(part.id);
        if (block === undefined || part.delta === '') return '';
        block.text += part.delta;
        return this.#event('response.function_call_arguments.delta', { item_id: block.item.id, output_index: block.outputIndex, delta: part.delta });
      }
      case 'text-end':
      case 'tool-input-end': {
        this.#pending.delete(part.id);
        const block = this.#blocks.get(part.id);
        return block === undefined ? '' : this.#close(part.id, block);
      }
      case 'web-search':
        return this.#webSearch(part.query, part.sources);
      case 'text-citation':
        return this.#cite(part.id, part.citation);
      case 'usage':
        this.#usage = part.usage;
        return '';
      case 'finish':
        return this.#finish(part.reason, part.usage);
      case 'error':
        return this.#fail(part.status, part.code, part.message);
      default: {
        const unknown: never = part;
        throw new Error(`unknown stream part ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** Responses streams end with their terminal event; there is no `[DONE]` marker. */
  end(): string {
    this.#closed = true;
    return '';
  }

  /** A failure after the stream started (the upstream broke off): response.failed and an error event. */
  fail(error: GatewayError): string {
    if (this.#closed) return '';
    return this.#fail(error.status, error.code, error.message);
  }

  #event(type: string, payload: Record<string, unknown>): string {
    return responsesEvent(type, this.#sequence++, payload);
  }

  #response(): Record<string, unknown> {
    return responseObject(this.#state, this.echo);
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    return this.#event('response.created', { response: this.#response() }) + this.#event('response.in_progress', { response: this.#response() });
  }

  /** The item of a started block, added once it has something to show. */
  #openPending(id: string, kind: 'message' | 'reasoning'): { block: OpenBlock; events: string } {
    this.#pending.delete(id);
    return this.#open(id, kind);
  }

  /** A signature of the item about to be added, on the reasoning item that waits for it, else on an empty one. */
  #carry(signature: string): string {
    const carried = signatureOfNextBlock(signature);
    if (this.#unsigned !== null) return this.#release(carried);
    const item: OutputItem = { id: itemId('rs'), type: 'reasoning', summary: [], encrypted_content: carried };
    const outputIndex = this.#state.output.length;
    this.#state.output.push(item);
    return this.#start() +
      this.#event('response.output_item.added', { output_index: outputIndex, item }) +
      this.#event('response.output_item.done', { output_index: outputIndex, item });
  }

  /** Ends the reasoning item that waited for the next one, with the state that item carries to the next if any. */
  #release(encryptedContent?: string): string {
    const block = this.#unsigned;
    if (block === null) return '';
    this.#unsigned = null;
    if (encryptedContent !== undefined && block.item.type === 'reasoning') block.item.encrypted_content = encryptedContent;
    return this.#closeEvents(block);
  }

  #open(id: string, kind: 'message' | 'reasoning'): { block: OpenBlock; events: string } {
    const existing = this.#blocks.get(id);
    if (existing !== undefined) return { block: existing, events: '' };
    const item: OutputItem = kind === 'message'
      ? { id: itemId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] }
      : { id: itemId('rs'), type: 'reasoning', summary: [] };
    const events = this.#add(id, item);
    const block = this.#blocks.get(id) as OpenBlock;
    if (kind === 'message') {
      return { block, events: events + this.#event('response.content_part.added', { item_id: item.id, output_index: block.outputIndex, content_index: 0, part: outputText('') }) };
    }
    return { block, events };
  }

  #add(id: string, item: OutputItem): string {
    const start = this.#start() + this.#release();
    const outputIndex = this.#state.output.length;
    this.#state.output.push(item);
    this.#blocks.set(id, { item, outputIndex, text: '', announced: false, citations: [] });
    return start + this.#event('response.output_item.added', { output_index: outputIndex, item });
  }

  #close(id: string, block: OpenBlock): string {
    this.#blocks.delete(id);
    if (block.item.type === 'message') this.#closedMessages.set(id, { item: block.item, outputIndex: block.outputIndex });
    return this.#closeEvents(block);
  }

  #closeEvents(block: OpenBlock): string {
    const { item, outputIndex, text } = block;
    let out = '';
    switch (item.type) {
      case 'message': {
        const part = outputText(text, block.citations);
        part.annotations.forEach((annotation, annotationIndex) => {
          out += this.#event('response.output_text.annotation.added', { item_id: item.id, output_index: outputIndex, content_index: 0, annotation_index: annotationIndex, annotation });
        });
        out += this.#event('response.output_text.done', { item_id: item.id, output_index: outputIndex, content_index: 0, text, logprobs: [] });
        out += this.#event('response.content_part.done', { item_id: item.id, output_index: outputIndex, content_index: 0, part });
        item.content = [part];
        item.status = 'completed';
        break;
      }
      case 'reasoning':
        if (block.announced) {
          const summary = { type: 'summary_text' as const, text };
          out += this.#event('response.reasoning_summary_text.done', { item_id: item.id, output_index: outputIndex, summary_index: 0, text });
          out += this.#event('response.reasoning_summary_part.done', { item_id: item.id, output_index: outputIndex, summary_index: 0, part: summary });
          item.summary = [summary];
        }
        break;
      case 'function_call':
        item.arguments = argumentsText(text);
        item.status = 'completed';
        out += this.#event('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, name: item.name, arguments: item.arguments });
        break;
      case 'web_search_call':
        break;
      default: {
        const unknown: never = item;
        throw new Error(`unknown output item ${JSON.stringify(unknown)}`);
      }
    }
    return out + this.#event('response.output_item.done', { output_index: outputIndex, item });
  }

  /** A finished search: its item added, the search events OpenAI sends while searching, and the item done. */
  #webSearch(query: string | undefined, sources: ReadonlyArray<{ url: string }>): string {
    const item = webSearchItem(itemId('ws'), query, sources, this.includeSources);
    if (item.type !== 'web_search_call') return '';
    const done = { ...item, action: { ...item.action } };
    item.status = 'in_progress';
    const start = this.#start() + this.#release();
    const outputIndex = this.#state.output.length;
    this.#state.output.push(done);
    const ids = { item_id: item.id, output_index: outputIndex };
    return start +
      this.#event('response.output_item.added', { output_index: outputIndex, item }) +
      this.#event('response.web_search_call.in_progress', ids) +
      this.#event('response.web_search_call.searching', ids) +
      this.#event('response.web_search_call.completed', ids) +
      this.#event('response.output_item.done', { output_index: outputIndex, item: done });
  }

  /**
   * A source the text block cites: kept until the block's text is complete (Anthropic cites before the text), or,
   * for a block already done (Gemini reports grounding last), added to its item at once.
   */
  #cite(id: string, citation: Citation): string {
    const { block: open, events } = this.#pending.get(id) === 'message' ? this.#openPending(id, 'message') : { block: this.#blocks.get(id), events: '' };
    if (open !== undefined) {
      open.citations.push(citation);
      return events;
    }
    const closed = this.#closedMessages.get(id);
    const part = closed?.item.type === 'message' ? closed.item.content[0] : undefined;
    if (closed === undefined || part === undefined) return '';
    const annotation = urlCitation(citation, part.text.length);
    part.annotations.push(annotation);
    return this.#event('response.output_text.annotation.added', { item_id: closed.item.id, output_index: closed.outputIndex, content_index: 0, annotation_index: part.annotations.length - 1, annotation });
  }

  #closeAll(): string {
    let out = '';
    for (const [id, block] of [...this.#blocks]) out += this.#close(id, block);
    return out + this.#release();
  }

  #finish(reason: FinishReason, usage: Usage | null): string {
    const out = this.#start() + this.#closeAll();
    this.#closed = true;
    const { status, incomplete_details } = statusOf(reason);
    this.#state.status = status;
    this.#state.incompleteDetails = incomplete_details;
    this.#state.usage = encodeResponsesUsage(usage ?? this.#usage ?? emptyUsage());
    this.#state.completedAt = Math.floor(Date.now() / 1000);
    return out + this.#event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.#response() });
  }

  #fail(status: number, code: string, message: string): string {
    const out = this.#start();
    this.#closed = true;
    this.#state.status = 'failed';
    this.#state.error = { code, message };
    if (this.#usage !== null) this.#state.usage = encodeResponsesUsage(this.#usage);
    return out + this.#event('response.failed', { response: this.#response() }) + responsesErrorEvent(this.#sequence++, status, code, message);
  }
}
