import { StringDecoder } from 'node:string_decoder';
import type { Usage } from '../../ir/usage.js';
import { isJsonObject } from '../../wire/json-object.js';
import { tokenCount } from '../../wire/token-count.js';

/** What an OpenAI media answer reports for billing; null where it reports nothing. */
export interface OpenAIMediaUsage {
  tokens: Usage | null;
  /** Audio seconds (`usage: {type: "duration"}` or verbose_json's `duration`). */
  seconds: number | null;
  /** Images in `data`. */
  images: number | null;
}

/**
 * Token usage in the media endpoints' shape (`input_tokens`, `output_tokens`, `input_tokens_details` or
 * `input_token_details`): gpt-image-1 images, gpt-4o-transcribe transcriptions, streamed speech.
 */
export function mediaTokenUsage(raw: unknown): Usage | null {
  if (!isJsonObject(raw) || (raw.type !== undefined && raw.type !== 'tokens')) return null;
  if (typeof raw.input_tokens !== 'number' && typeof raw.output_tokens !== 'number') return null;
  const input = tokenCount(raw.input_tokens);
  const output = tokenCount(raw.output_tokens);
  return { input: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
}

/** Reads usage from a JSON media answer (images, transcription, translation); all null when the body is not JSON. */
export function readOpenAIMediaUsage(body: Buffer | string): OpenAIMediaUsage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return { tokens: null, seconds: null, images: null };
  }
  if (!isJsonObject(parsed)) return { tokens: null, seconds: null, images: null };
  const usage = parsed.usage;
  let seconds: number | null = null;
  if (isJsonObject(usage) && usage.type === 'duration' && typeof usage.seconds === 'number' && usage.seconds >= 0) seconds = usage.seconds;
  else if (typeof parsed.duration === 'number' && parsed.duration >= 0) seconds = parsed.duration;
  return { tokens: mediaTokenUsage(usage), seconds, images: Array.isArray(parsed.data) ? parsed.data.length : null };
}

/**
 * Usage carried by a streamed media answer's SSE events (`transcript.text.done`, `speech.audio.done`): fed the
 * raw bytes as they pass, it keeps the last `usage` it saw.
 */
export class MediaStreamUsageObserver {
  #pending = '';
  readonly #decoder = new StringDecoder('utf8');
  tokens: Usage | null = null;
  seconds: number | null = null;

  observe(chunk: Buffer): void {
    this.#pending += this.#decoder.write(chunk);
    if (this.#pending.length > 1024 * 1024) this.#pending = this.#pending.slice(-64 * 1024);
    let boundary = this.#pending.search(/\r?\n\r?\n/);
    while (boundary >= 0) {
      const event = this.#pending.slice(0, boundary);
      this.#pending = this.#pending.slice(boundary).replace(/^\r?\n\r?\n/, '');
      if (event.includes('"usage"')) this.#read(event);
      boundary = this.#pending.search(/\r?\n\r?\n/);
    }
  }

  #read(event: string): void {
    const data = event.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n');
    try {
      const parsed = JSON.parse(data) as unknown;
      if (!isJsonObject(parsed)) return;
      const tokens = mediaTokenUsage(parsed.usage);
      if (tokens !== null) this.tokens = tokens;
      if (isJsonObject(parsed.usage) && parsed.usage.type === 'duration' && typeof parsed.usage.seconds === 'number') this.seconds = parsed.usage.seconds;
    } catch {
      // not JSON: nothing to read
    }
  }
}
