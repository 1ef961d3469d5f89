/**
 * Answers of the mock OpenAI upstream's media endpoints, shaped like api.openai.com's: images (gpt-image-* with
 * token usage and b64_json; dall-e-* with url or b64_json), transcriptions and translations (json, verbose_json,
 * text, srt, vtt; whisper-1 billed by duration, gpt-4o-*-transcribe by tokens), speech bytes, moderations.
 */
import { createHash, randomBytes } from 'node:crypto';
import { estimateTokens, invalidRequest } from './mock-openai-upstream-wire.js';

/** A valid 1×1 PNG: what every mock image is. */
export const MOCK_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
/** gpt-image-1 medium quality 1024×1024: output tokens per image. */
export const IMAGE_OUTPUT_TOKENS = 1056;
/** gpt-image-1: input tokens an uploaded image costs (low fidelity). */
export const IMAGE_INPUT_TOKENS = 323;

export function isGptImageModel(model: string): boolean {
  return model.startsWith('gpt-image');
}

export interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  responseFormat: 'url' | 'b64_json' | undefined;
  inputImages: number;
}

export function validateImageOptions(model: string, n: number, responseFormat: unknown, size: unknown): void {
  if (!Number.isInteger(n) || n < 1 || n > 10) throw invalidRequest(`Invalid 'n': integer below minimum value. Expected a value >= 1 and <= 10, but got ${n} instead.`, 'n', 'integer_below_min_value');
  if (model === 'dall-e-3' && n !== 1) throw invalidRequest('You must provide n=1 for this model.', 'n');
  if (responseFormat !== undefined && responseFormat !== 'url' && responseFormat !== 'b64_json') throw invalidRequest(`Invalid value: '${String(responseFormat)}'. Supported values are: 'url' and 'b64_json'.`, 'response_format', 'invalid_value');
  if (isGptImageModel(model) && responseFormat !== undefined) throw invalidRequest("Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter');
  if (size !== undefined && (typeof size !== 'string' || !/^(auto|\d+x\d+)$/.test(size))) throw invalidRequest(`Invalid value: '${String(size)}'.`, 'size', 'invalid_value');
  const dalleSizes = DALLE_SIZES[model];
  if (dalleSizes !== undefined && size !== undefined && !dalleSizes.includes(size as string)) {
    throw invalidRequest(`Invalid size: '${String(size)}'. Supported sizes are ${dalleSizes.join(', ')} for ${model} models.`, 'size', 'invalid_value');
  }
}

/** The sizes DALL·E generates (each priced on its own). */
const DALLE_SIZES: Record<string, readonly string[]> = { 'dall-e-2': ['256x256', '512x512', '1024x1024'], 'dall-e-3': ['1024x1024', '1792x1024', '1024x1792'] };

export function imagesAnswer(request: ImageRequest, origin: string): Record<string, unknown> {
  const created = Math.floor(Date.now() / 1000);
  if (isGptImageModel(request.model)) {
    const text = estimateTokens(request.prompt);
    const image = request.inputImages * IMAGE_INPUT_TOKENS;
    const output = request.n * IMAGE_OUTPUT_TOKENS;
    return {
      created,
      background: 'opaque',
      data: Array.from({ length: request.n }, () => ({ b64_json: MOCK_PNG_BASE64 })),
      output_format: 'png',
      quality: 'medium',
      size: '1024x1024',
      usage: { input_tokens: text + image, input_tokens_details: { text_tokens: text, image_tokens: image }, output_tokens: output, total_tokens: text + image + output },
    };
  }
  const data = Array.from({ length: request.n }, () => {
    const entry: Record<string, unknown> = request.responseFormat === 'b64_json' ? { b64_json: MOCK_PNG_BASE64 } : { url: `${origin}/mock-images/img-${randomBytes(8).toString('hex')}.png` };
    if (request.model === 'dall-e-3') entry.revised_prompt = `A detailed rendering of: ${request.prompt}`;
    return entry;
  });
  return { created, data };
}

/** What the mock heard in an uploaded audio file. */
export interface AudioFacts {
  filename: string;
  size: number;
  sha256: string;
  /** From the WAV header when the file is WAV, else size / 16 000 bytes a second. */
  seconds: number;
}

export function wavSeconds(head: Buffer, size: number): number | null {
  if (head.length < 44 || head.toString('ascii', 0, 4) !== 'RIFF' || head.toString('ascii', 8, 12) !== 'WAVE') return null;
  let offset = 12;
  let byteRate = 0;
  while (offset + 8 <= head.length) {
    const id = head.toString('ascii', offset, offset + 4);
    const chunk = head.readUInt32LE(offset + 4);
    if (id === 'fmt ') byteRate = head.readUInt32LE(offset + 16);
    if (id === 'data') return byteRate === 0 ? null : Math.min(chunk, size - offset - 8) / byteRate;
    offset += 8 + chunk + (chunk % 2);
  }
  return null;
}

export function transcriptText(facts: AudioFacts, translate: boolean): string {
  return `${translate ? 'Translated' : 'Transcribed'} audio ${facts.filename} of ${facts.size} bytes with digest ${facts.sha256.slice(0, 12)}.`;
}

function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

const TRANSCRIBE_MODELS = new Set(['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe', 'gpt-4o-transcribe-diarize']);

/** Body and content type of a transcription or translation answer. */
export function transcriptionAnswer(model: string, format: string, facts: AudioFacts, translate: boolean, language: string | undefined): { body: string; contentType: string } {
  if (!TRANSCRIBE_MODELS.has(model) || (translate && model !== 'whisper-1')) throw invalidRequest(`The model \`${model}\` does not exist or you do not have access to it.`, 'model', 'model_not_found');
  const whisper = model === 'whisper-1';
  if (!whisper && format !== 'json' && format !== 'text') throw invalidRequest(`response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text'.`, 'response_format', 'unsupported_value');
  const text = transcriptText(facts, translate);
  const seconds = Math.round(facts.seconds * 100) / 100;
  const usage = whisper
    ? { type: 'duration', seconds: Math.ceil(facts.seconds) }
    : { type: 'tokens', input_tokens: Math.ceil(facts.seconds * 10), input_token_details: { text_tokens: 0, audio_tokens: Math.ceil(facts.seconds * 10) }, output_tokens: estimateTokens(text), total_tokens: Math.ceil(facts.seconds * 10) + estimateTokens(text) };
  switch (format) {
    case 'json':
      return { body: JSON.stringify(translate ? { text } : { text, usage }), contentType: 'application/json' };
    case 'verbose_json':
      return {
        body: JSON.stringify({
          task: translate ? 'translate' : 'transcribe',
          language: translate ? 'english' : (language ?? 'english'),
          duration: seconds,
          text,
          segments: [{ id: 0, seek: 0, start: 0, end: seconds, text: ` ${text}`, tokens: [50364, 50414], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 }],
          ...(translate ? {} : { usage }),
        }),
        contentType: 'application/json',
      };
    case 'text':
      return { body: `${text}\n`, contentType: 'text/plain; charset=utf-8' };
    case 'srt':
      return { body: `1\n${timestamp(0, ',')} --> ${timestamp(seconds, ',')}\n${text}\n\n`, contentType: 'text/plain; charset=utf-8' };
    case 'vtt':
      return { body: `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(seconds, '.')}\n${text}\n\n`, contentType: 'text/plain; charset=utf-8' };
    default:
      throw invalidRequest(`Invalid value: '${format}'. Supported values are: 'json', 'text', 'srt', 'verbose_json', and 'vtt'.`, 'response_format', 'invalid_value');
  }
}

/** SSE events of a streamed transcription (gpt-4o-*-transcribe): word deltas, then the whole text with usage. */
export function transcriptionEvents(model: string, facts: AudioFacts): string[] {
  if (model === 'whisper-1') throw invalidRequest("Streaming is not supported for the 'whisper-1' model.", 'stream', 'unsupported_value');
  const text = transcriptText(facts, false);
  const input = Math.ceil(facts.seconds * 10);
  const output = estimateTokens(text);
  const deltas = text.split(/(?<= )/).map((delta) => JSON.stringify({ type: 'transcript.text.delta', delta }));
  const done = JSON.stringify({ type: 'transcript.text.done', text, usage: { type: 'tokens', input_tokens: input, input_token_details: { text_tokens: 0, audio_tokens: input }, output_tokens: output, total_tokens: input + output } });
  return [...deltas, done];
}

export const SPEECH_CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };
/** Bytes of mock audio per input character (24 kHz 16-bit mono is 48 000 bytes a second; this is far shorter). */
export const SPEECH_BYTES_PER_CHARACTER = 400;

/** Deterministic audio bytes for a text: a format's magic bytes, then a digest-derived pattern. */
export function speechAudio(input: string, format: string): Buffer {
  const length = Math.max(1, [...input].length) * SPEECH_BYTES_PER_CHARACTER;
  const audio = Buffer.alloc(length);
  const digest = createHash('sha256').update(input).digest();
  for (let index = 0; index < length; index += 1) audio[index] = digest[index % digest.length] as number;
  const magic = format === 'mp3' ? Buffer.from('ID3') : format === 'flac' ? Buffer.from('fLaC') : format === 'wav' ? Buffer.from('RIFF') : format === 'opus' ? Buffer.from('OggS') : Buffer.alloc(0);
  magic.copy(audio, 0);
  return audio;
}

const CATEGORIES = ['harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm', 'self-harm/instructions', 'self-harm/intent', 'sexual', 'sexual/minors', 'violence', 'violence/graphic'];

/** One result per input: flagged for violence when the text mentions killing or attacking. */
export function moderationAnswer(model: string, inputs: string[]): Record<string, unknown> {
  return {
    id: `modr-${randomBytes(12).toString('hex')}`,
    model,
    results: inputs.map((text) => {
      const violent = /\b(kill|attack|murder)\b/i.test(text);
      const categories = Object.fromEntries(CATEGORIES.map((name) => [name, name === 'violence' && violent]));
      const scores = Object.fromEntries(CATEGORIES.map((name) => [name, name === 'violence' && violent ? 0.91 : 0.0001]));
      const applied = Object.fromEntries(CATEGORIES.map((name) => [name, ['text']]));
      return { flagged: violent, categories, category_scores: scores, category_applied_input_types: applied };
    }),
  };
}
