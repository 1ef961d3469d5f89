import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { errorTypeForStatus } from '../../errors/error-codes.js';
import type { FinishReason } from '../../ir/finish-reason.js';
import type { StreamPart } from '../../ir/stream-part.js';
import { emptyUsage, type Usage } from '../../ir/usage.js';
import type { StreamEncoder, StreamEncoderOptions } from '../client-codec.js';
import { openAICompletionId } from './completion-id.js';
import { encodeOpenAIFinishReason } from '../../wire/openai/finish-reason.js';
import { encodeOpenAIUsage } from '../../wire/openai/usage.js';
import { googleExtraContent } from './encode-response.js';

/** A chunk delta as this gateway sends it: OpenAI's, plus `reasoning_content` for reasoning text (see encode-response). */
type GatewayDelta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };

const DONE = 'data: [DONE]\n\n';

function event(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** The error type of an in-stream error: the type of its status class, as every answer of the gateway carries. */
export function openAIErrorType(status: number): string {
  return errorTypeForStatus(status);
}

/**
 * Canonical stream parts → `chat.completion.chunk` server-sent events, the way OpenAI frames them: a first chunk with
 * the role, text deltas, tool-call deltas addressed by `index` (id and name in the first delta of each call,
 * argument fragments after), a finish chunk, then — only when the caller asked (`stream_options.include_usage`) — a
 * usage chunk with `choices: []`, and `data: [DONE]`. An `error` part becomes `data: {"error":…}` and ends the
 * stream without [DONE], which the openai SDKs raise as an APIError.
 */
export class OpenAIChatStreamEncoder implements StreamEncoder {
  #id = '';
  #created = 0;
  #started = false;
  #closed = false;
  #failed = false;
  #usage: Usage | null = null;
  /** Canonical tool block id → OpenAI tool call index, in order of appearance. */
  readonly #toolIndexes = new Map<string, number>();
  readonly #toolsWithArguments = new Set<string>();

  constructor(private readonly options: StreamEncoderOptions) {}

  encode(part: StreamPart): string {
    if (this.#closed) return '';
    switch (part.type) {
      case 'response-start':
        if (this.#started) return '';
        this.#id = openAICompletionId(part.id);
        this.#created = part.created;
        return this.#start();
      case 'text-start':
      case 'reasoning-start':
        return this.#start();
      case 'text-end':
      case 'reasoning-end':
        return '';
      case 'text-delta':
        return part.delta === '' ? '' : this.#start() + this.#delta({ content: part.delta });
      case 'reasoning-delta':
        return part.delta === '' ? '' : this.#start() + this.#delta({ reasoning_content: part.delta });
      case 'tool-input-start': {
        if (this.#toolIndexes.has(part.id)) return '';
        const index = this.#toolIndexes.size;
        this.#toolIndexes.set(part.id, index);
        // Gemini's signature of the call rides on its first delta, as Google's OpenAI-compatible API sends it.
        const call = { index, id: part.toolCallId, type: 'function' as const, function: { name: part.toolName, arguments: '' }, ...googleExtraContent(part.signature) };
        return this.#start() + this.#delta({ tool_calls: [call] });
      }
      case 'tool-input-delta': {
        const index = this.#toolIndexes.get(part.id);
        if (index === undefined || part.delta === '') return '';
        this.#toolsWithArguments.add(part.id);
        return this.#delta({ tool_calls: [{ index, function: { arguments: part.delta } }] });
      }
      case 'tool-input-end': {
        // A call that streamed no arguments still gets JSON arguments, as OpenAI's always have.
        const index = this.#toolIndexes.get(part.id);
        if (index === undefined || this.#toolsWithArguments.has(part.id)) return '';
        this.#toolsWithArguments.add(part.id);
        return this.#delta({ tool_calls: [{ index, function: { arguments: '{}' } }] });
      }
      case 'usage':
        this.#usage = part.usage;
        return '';
      case 'finish':
        return this.#finish(part.reason, part.usage);
      case 'web-search':
      case 'text-citation':
        // Chat completion chunks carry no search items; citations go out as annotations on unstreamed answers only.
        return '';
      case 'error':
        this.#closed = true;
        this.#failed = true;
        return event({ error: { message: part.message, type: openAIErrorType(part.status), code: part.code, param: null } });
      default: {
        const unknown: never = part;
        throw new Error(`unknown stream part ${JSON.stringify(unknown)}`);
      }
    }
  }

  end(): string {
    if (this.#failed) return '';
    this.#closed = true;
    return DONE;
  }

  #chunk(choices: ChatCompletionChunk.Choice[], usage?: Usage): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = { id: this.#id, object: 'chat.completion.chunk', created: this.#created, model: this.options.model, choices };
    // OpenAI adds `usage: null` to every chunk once usage was asked for, and the usage itself on the last one.
    if (this.options.includeUsage) chunk.usage = usage === undefined ? null : encodeOpenAIUsage(usage);
    return chunk;
  }

  #delta(delta: GatewayDelta, finishReason: ChatCompletionChunk.Choice['finish_reason'] = null): string {
    return event(this.#chunk([{ index: 0, delta, logprobs: null, finish_reason: finishReason }]));
  }

  /** The role chunk, once; a stream whose upstream sent no `response-start` gets a fresh id. */
  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    if (this.#id === '') {
      this.#id = openAICompletionId('');
      this.#created = Math.floor(Date.now() / 1000);
    }
    return this.#delta({ role: 'assistant', content: '', refusal: null });
  }

  #finish(reason: FinishReason, usage: Usage | null): string {
    const start = this.#start();
    this.#closed = true;
    const finish = this.#delta({}, encodeOpenAIFinishReason(reason, this.#toolIndexes.size > 0));
    if (!this.options.includeUsage) return start + finish;
    return start + finish + event(this.#chunk([], usage ?? this.#usage ?? emptyUsage()));
  }
}

