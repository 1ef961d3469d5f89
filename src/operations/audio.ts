import { badRequest } from '../codecs/openai-chat/bad-request.js';
import type { Usage } from '../ir/usage.js';
import { BOUND_BYTES_PER_SECOND, estimateAudioSeconds } from '../multipart/audio-duration.js';
import { readMultipartForm } from '../multipart/read-multipart-form.js';
import { AnswerPrice } from '../billing/answer-report.js';
import { relayStreamed } from '../relay/relay-streamed.js';
import { relayUnary } from '../relay/relay-unary.js';
import type { GatewayServices } from '../services.js';
import { estimateTextTokens } from '../shared/estimate-tokens.js';
import type { MediaBody, OpenAIMediaPath } from '../upstreams/media-capabilities.js';
import { MediaStreamUsageObserver, readOpenAIMediaUsage } from '../upstreams/openai/openai-media-usage.js';
import type { UpstreamAdapter, UpstreamRequest } from '../upstreams/upstream-adapter.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { formBoolean, optionalChoice, requiredString, upstreamForm, upstreamJson } from './media-fields.js';
import { mediaRoute, noChannelFor, resolveMediaModel, SPOOL_DIRECTORY, type MediaCall } from './media-route.js';
import { guardCallerTexts, guardFormField, guardHeaders } from './guard-texts.js';
import { moderationCheck } from './moderation-check.js';

/** Audio files are at most 25 MB each. */
export const MAX_AUDIO_FILE_BYTES = 25 * 1024 * 1024;
const AUDIO_FORM_LIMITS = { maxFileBytes: MAX_AUDIO_FILE_BYTES, maxFiles: 1, fileFields: new Set(['file']), maxFields: 32, maxFieldBytes: 64 * 1024, spoolDirectory: SPOOL_DIRECTORY };
/** Reservation bound for token-priced transcription: 50 input tokens and 10 output tokens a second of audio. */
const AUDIO_INPUT_TOKENS_PER_SECOND_BOUND = 50;
const TRANSCRIPT_TOKENS_PER_SECOND_BOUND = 10;
/** Reservation bound for token-priced speech: 4 audio tokens a character of input. */
const SPEECH_TOKENS_PER_CHARACTER_BOUND = 4;
/** OpenAI's cap on `input` of /v1/audio/speech. */
const MAX_SPEECH_CHARACTERS = 4096;

const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;

function tokens(input: number, output: number): Usage {
  return { input: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
}

/** An OpenAI-wire media request, or null for a channel without OpenAI's media endpoints (skipped). */
function openAIMedia(adapter: UpstreamAdapter, route: ChannelRoute, credential: string, path: OpenAIMediaPath, body: MediaBody): UpstreamRequest | null {
  const build = adapter.media?.openAIMediaRequest;
  return build === undefined ? null : build(route.channel, credential, path, route.upstreamModel, body);
}

function transcriptContentType(format: (typeof TRANSCRIPTION_FORMATS)[number]): string {
  return format === 'json' || format === 'verbose_json' || format === 'diarized_json' ? 'application/json' : 'text/plain; charset=utf-8';
}

/**
 * POST /v1/audio/transcriptions and /v1/audio/translations (multipart, one file of at most 25 MB): the upload is
 * spooled to disk as it arrives (the model field may come after the file) and streamed from there to the upstream
 * as a rebuilt form with the upstream model name, so memory stays flat and a retry can send it again. Billed per
 * audio minute (the upstream's duration, else the WAV header's, else an estimate from the size) and, when the
 * upstream reports them, per token.
 */
function audioFormRoute(services: GatewayServices, path: '/audio/transcriptions' | '/audio/translations'): RouteHandler {
  const translation = path === '/audio/translations';
  const moderate = moderationCheck(services);
  return mediaRoute(services, 'openai-audio', async (call) => {
    const form = call.hold(await readMultipartForm(call.context.request, AUDIO_FORM_LIMITS));
    const file = form.files.find((entry) => entry.field === 'file');
    if (file === undefined) throw badRequest('file', "An audio file is required in the form field 'file'.");
    if (file.size === 0) throw badRequest('file', 'The uploaded audio file is empty.');
    const modelId = requiredString(form.field('model'), 'model');
    const format = optionalChoice(form.field('response_format'), 'response_format', TRANSCRIPTION_FORMATS) ?? 'json';
    const stream = formBoolean(form.field('stream'), 'stream');
    if (stream && translation) throw badRequest('stream', 'Translations cannot be streamed.');
    const { model, routes } = resolveMediaModel(call, modelId, 'audio', `POST /v1${path}`);
    // Input guardrails before anything is held or sent: the prompt masked in the form the upstream gets.
    const guard = await guardFormField(call, moderate, model.id, form, 'prompt');
    const duration = await estimateAudioSeconds(file.path, file.size);
    const boundSeconds = duration.exact ? duration.seconds : file.size / BOUND_BYTES_PER_SECOND;
    const promptTokens = estimateTextTokens(form.field('prompt') ?? '');
    const { rateLimitHeaders } = await call.admit({
      model,
      estimatedTokens: promptTokens,
      shape: { stream, promptTokens },
      maxUsage: {
        audioSeconds: Math.ceil(boundSeconds),
        tokens: tokens(promptTokens + Math.ceil(boundSeconds * AUDIO_INPUT_TOKENS_PER_SECOND_BOUND), Math.ceil(boundSeconds * TRANSCRIPT_TOKENS_PER_SECOND_BOUND)),
      },
    });
    const headers = { ...rateLimitHeaders, ...guardHeaders(guard) };
    const price = new AnswerPrice(model);
    const request = (adapter: UpstreamAdapter, route: ChannelRoute, credential: string): UpstreamRequest | null =>
      openAIMedia(adapter, route, credential, path, upstreamForm(form, route.upstreamModel));
    if (stream) {
      const observer = new MediaStreamUsageObserver();
      const billed = () => ({ usage: observer.tokens, billable: { audioSeconds: observer.seconds ?? duration.seconds } });
      const report = await relayStreamed(call.relay, call.sink, call.attempts, routes, { request, observe: (chunk) => observer.observe(chunk), billed }, headers, { price, checkpoint: call.checkpoint });
      if (report === null) throw noChannelFor(model, 'transcriptions');
      return report;
    }
    const answer = await relayUnary(call.relay, call.sink, call.attempts, routes, { request, parse: (_adapter, _route, body) => ({ body, usage: readOpenAIMediaUsage(body) }) }, { model: model.id });
    if (answer === null) throw noChannelFor(model, translation ? 'translations' : 'transcriptions');
    const outcome = { usage: answer.usage.tokens, billable: { audioSeconds: answer.usage.seconds ?? duration.seconds } };
    call.sink.send({ status: 200, body: answer.body, contentType: transcriptContentType(format), headers: { ...headers, ...price.priced(answer.body, outcome, null).headers } });
    return { status: 200, ...outcome, price };
  }, { refuseBeforeUpload: 'audio' });
}

export function transcriptionsRoute(services: GatewayServices): RouteHandler {
  return audioFormRoute(services, '/audio/transcriptions');
}

export function translationsRoute(services: GatewayServices): RouteHandler {
  return audioFormRoute(services, '/audio/translations');
}

function validateVoice(voice: unknown): void {
  if (typeof voice === 'string' && voice.trim() !== '') return;
  if (voice !== null && typeof voice === 'object' && typeof (voice as { id?: unknown }).id === 'string') return;
  throw badRequest('voice', "'voice' is required: a voice name such as 'alloy', or {\"id\": \"<custom voice id>\"}.");
}

/**
 * POST /v1/audio/speech (JSON in, audio out): the upstream's audio bytes are streamed to the caller as they come
 * (or its SSE events with `stream_format: "sse"`), billed per million characters of input and, when a streamed
 * answer reports them, per token.
 */
export function speechRoute(services: GatewayServices): RouteHandler {
  const moderate = moderationCheck(services);
  return mediaRoute(services, 'openai-audio', async (call: MediaCall) => {
    const body = await readJsonObject(call.context, services.config.maxBodyBytes);
    const modelId = requiredString(body.model, 'model');
    let input = requiredString(body.input, 'input');
    let characters = [...input].length;
    if (characters > MAX_SPEECH_CHARACTERS) throw badRequest('input', `'input' is longer than ${MAX_SPEECH_CHARACTERS} characters.`);
    validateVoice(body.voice);
    optionalChoice(body.response_format, 'response_format', SPEECH_FORMATS);
    optionalChoice(body.stream_format, 'stream_format', ['sse', 'audio'] as const);
    if (body.speed !== undefined && body.speed !== null && (typeof body.speed !== 'number' || body.speed < 0.25 || body.speed > 4)) {
      throw badRequest('speed', "'speed' must be a number from 0.25 to 4.");
    }
    const { model, routes } = resolveMediaModel(call, modelId, 'audio', 'POST /v1/audio/speech');
    // Input guardrails before anything is held or sent: the upstream speaks the masked text, billed by its length.
    const spoken = { text: input };
    const guard = await guardCallerTexts(call, moderate, model.id, () => [spoken]);
    if (spoken.text !== input) {
      body.input = input = spoken.text;
      characters = [...input].length;
    }
    const promptTokens = estimateTextTokens(input);
    const { rateLimitHeaders } = await call.admit({
      model,
      estimatedTokens: promptTokens,
      shape: { stream: true, promptTokens },
      maxUsage: { characters, tokens: tokens(promptTokens, characters * SPEECH_TOKENS_PER_CHARACTER_BOUND) },
    });
    const headers = { ...rateLimitHeaders, ...guardHeaders(guard) };
    const observer = new MediaStreamUsageObserver();
    const billed = () => ({ usage: observer.tokens, billable: { characters } });
    const report = await relayStreamed(call.relay, call.sink, call.attempts, routes, {
      request: (adapter, route, credential) => openAIMedia(adapter, route, credential, '/audio/speech', upstreamJson(body, route.upstreamModel)),
      observe: body.stream_format === 'sse' ? (chunk) => observer.observe(chunk) : undefined,
      billed,
    }, headers, { price: new AnswerPrice(model), checkpoint: call.checkpoint });
    if (report === null) throw noChannelFor(model, 'speech');
    return report;
  });
}
