import { newId } from '../../shared/ids.js';
import type { OpenAIRealtimeUsage } from './usage-mapping.js';

/** One content part of the assistant message being written. */
interface ContentPart {
  kind: 'text' | 'audio';
  /** The text so far, or the audio's transcript so far. */
  text: string;
}

interface MessageItem {
  id: string;
  outputIndex: number;
  parts: ContentPart[];
}

type Item = Record<string, unknown> & { id: string };

/**
 * The OpenAI Realtime response a translated upstream turn is written as: `response.created`, then per output item
 * `response.output_item.added`, per content part `response.content_part.added`, the deltas, and each part's and item's
 * `…done` events, then `response.done` with its items and usage. Every method returns the server events to send (as
 * objects, without `event_id`).
 */
export class OpenAIResponseBuilder {
  readonly id = newId('resp');
  readonly conversationId: string;
  status: 'in_progress' | 'completed' | 'cancelled' | 'incomplete' = 'in_progress';
  statusDetails: Record<string, unknown> | null = null;
  readonly #output: Item[] = [];
  #message: MessageItem | null = null;

  constructor(conversationId: string, readonly outputModalities: Array<'text' | 'audio'>) {
    this.conversationId = conversationId;
  }

  #resource(usage: OpenAIRealtimeUsage | null): Record<string, unknown> {
    return {
      object: 'realtime.response',
      id: this.id,
      status: this.status,
      status_details: this.statusDetails,
      output: this.#output,
      conversation_id: this.conversationId,
      output_modalities: this.outputModalities,
      max_output_tokens: 'inf',
      audio: { output: { format: { type: 'audio/pcm', rate: 24000 } } },
      usage,
    };
  }

  created(): Array<Record<string, unknown>> {
    return [{ type: 'response.created', response: this.#resource(null) }];
  }

  #part(kind: 'text' | 'audio', events: Array<Record<string, unknown>>): { message: MessageItem; index: number; part: ContentPart } {
    let message = this.#message;
    if (message === null) {
      message = { id: newId('item'), outputIndex: this.#output.length, parts: [] };
      this.#message = message;
      this.#output.push({ id: message.id, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] });
      events.push({ type: 'response.output_item.added', response_id: this.id, output_index: message.outputIndex, item: { id: message.id, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
    }
    let index = message.parts.findIndex((part) => part.kind === kind);
    if (index < 0) {
      index = message.parts.length;
      message.parts.push({ kind, text: '' });
      events.push({ type: 'response.content_part.added', response_id: this.id, item_id: message.id, output_index: message.outputIndex, content_index: index, part: kind === 'text' ? { type: 'text', text: '' } : { type: 'audio', transcript: '' } });
    }
    return { message, index, part: message.parts[index] as ContentPart };
  }

  text(delta: string): Array<Record<string, unknown>> {
    const events: Array<Record<string, unknown>> = [];
    const { message, index, part } = this.#part('text', events);
    part.text += delta;
    events.push({ type: 'response.output_text.delta', response_id: this.id, item_id: message.id, output_index: message.outputIndex, content_index: index, delta });
    return events;
  }

  audio(base64: string): Array<Record<string, unknown>> {
    const events: Array<Record<string, unknown>> = [];
    const { message, index } = this.#part('audio', events);
    if (base64 !== '') events.push({ type: 'response.output_audio.delta', response_id: this.id, item_id: message.id, output_index: message.outputIndex, content_index: index, delta: base64 });
    return events;
  }

  transcript(delta: string): Array<Record<string, unknown>> {
    const events: Array<Record<string, unknown>> = [];
    const { message, index, part } = this.#part('audio', events);
    part.text += delta;
    events.push({ type: 'response.output_audio_transcript.delta', response_id: this.id, item_id: message.id, output_index: message.outputIndex, content_index: index, delta });
    return events;
  }

  /** Ends the assistant message being written, if any: each part's done events, then the item's. */
  finishMessage(): Array<Record<string, unknown>> {
    const message = this.#message;
    if (message === null) return [];
    this.#message = null;
    const events: Array<Record<string, unknown>> = [];
    const base = { response_id: this.id, item_id: message.id, output_index: message.outputIndex };
    const content: Array<Record<string, unknown>> = [];
    for (const [index, part] of message.parts.entries()) {
      if (part.kind === 'text') {
        events.push({ type: 'response.output_text.done', ...base, content_index: index, text: part.text });
        events.push({ type: 'response.content_part.done', ...base, content_index: index, part: { type: 'text', text: part.text } });
        content.push({ type: 'output_text', text: part.text });
      } else {
        events.push({ type: 'response.output_audio.done', ...base, content_index: index });
        events.push({ type: 'response.output_audio_transcript.done', ...base, content_index: index, transcript: part.text });
        events.push({ type: 'response.content_part.done', ...base, content_index: index, part: { type: 'audio', transcript: part.text } });
        content.push({ type: 'output_audio', transcript: part.text });
      }
    }
    const item = { id: message.id, object: 'realtime.item', type: 'message', role: 'assistant', status: this.status === 'in_progress' ? 'completed' : 'incomplete', content };
    this.#output[message.outputIndex] = item;
    events.push({ type: 'response.output_item.done', response_id: this.id, output_index: message.outputIndex, item });
    return events;
  }

  /** A whole function call item: added, its arguments (one delta), done. */
  functionCall(callId: string, name: string, args: string): Array<Record<string, unknown>> {
    const events = this.finishMessage();
    const id = newId('item');
    const outputIndex = this.#output.length;
    const item = { id, object: 'realtime.item', type: 'function_call', status: 'completed', name, call_id: callId, arguments: args };
    this.#output.push(item);
    events.push({ type: 'response.output_item.added', response_id: this.id, output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
    events.push({ type: 'response.function_call_arguments.delta', response_id: this.id, item_id: id, output_index: outputIndex, call_id: callId, delta: args });
    events.push({ type: 'response.function_call_arguments.done', response_id: this.id, item_id: id, output_index: outputIndex, call_id: callId, name, arguments: args });
    events.push({ type: 'response.output_item.done', response_id: this.id, output_index: outputIndex, item });
    return events;
  }

  /** Ends the response: what is still open, then `response.done` with `usage`. */
  done(usage: OpenAIRealtimeUsage | null): Array<Record<string, unknown>> {
    const events = this.finishMessage();
    if (this.status === 'in_progress') this.status = 'completed';
    events.push({ type: 'response.done', response: this.#resource(usage) });
    return events;
  }
}
