import type { Clock } from '../../shared/clock.js';
import type { Channel } from '../../domain/records.js';
import { OpenAIWireAdapter } from '../openai/openai-wire-adapter.js';
import type { UpstreamOperation, UpstreamRequest, UpstreamResponse, UpstreamTimeouts, UpstreamTransport } from '../upstream-adapter.js';
import { asksStreamUsage, openAIWire } from '../../wire/openai/wire.js';
import { passThroughEndpoint } from '../../wire/wire.js';
import { readSimulatorSettings, simulateCompletion, type SimulatedCompletion, type SimulatorSettings } from './simulated-completion.js';
import { simulateEmbeddings } from './simulated-embedding.js';
import type { CallerSignal } from '../../relay/caller-signal.js';

const SYSTEM_FINGERPRINT = 'gateway-simulator';

const EMBEDDINGS_PATH = passThroughEndpoint(openAIWire, { kind: 'embeddings', batch: true });

/**
 * The built-in simulated provider (channel type `simulator`): OpenAI-shaped chat completions and embeddings produced
 * in-process, with realistic usage and optional pacing. Its chat answers say that they are simulated. It speaks
 * OpenAI's wire, so callers of every protocol reach it through the shared OpenAI translation.
 */
export class SimulatorAdapter extends OpenAIWireAdapter {

  constructor(private readonly clock: Clock) {
    super();
  }

  buildPassThrough(channel: Channel, _credential: string, operation: UpstreamOperation, upstreamModel: string, body: string | Buffer): UpstreamRequest {
    const url = `simulator://${encodeURIComponent(channel.name)}/${encodeURIComponent(upstreamModel)}${passThroughEndpoint(openAIWire, operation)}`;
    return { url, method: 'POST', headers: {}, body };
  }

  transport(channel: Channel): UpstreamTransport {
    const settings = readSimulatorSettings(channel.settings);
    return { send: (request, options) => this.#answer(request, settings, channel.settings, options.signal, options.timeouts) };
  }

  /** The simulator takes what OpenAI takes (base64 embeddings included). */
  protected isOfficial(): boolean {
    return true;
  }

  async #answer(
    request: UpstreamRequest,
    settings: SimulatorSettings,
    channelSettings: Record<string, unknown>,
    signal: CallerSignal,
    _timeouts: UpstreamTimeouts,
  ): Promise<UpstreamResponse> {
    const body = JSON.parse(request.body?.toString() ?? '{}') as Record<string, unknown>;
    if (settings.latencyMs > 0) await sleep(settings.latencyMs, signal);
    if (request.url.endsWith(EMBEDDINGS_PATH)) {
      return response({ 'content-type': 'application/json' }, once(Buffer.from(JSON.stringify(simulateEmbeddings(body, channelSettings)))));
    }
    const completion = simulateCompletion(body, settings, this.clock.now());
    const model = typeof body.model === 'string' ? body.model : 'simulator';
    if (body.stream === true) {
      return response({ 'content-type': 'text/event-stream' }, streamChunks(completion, model, asksStreamUsage(body), settings.chunkDelayMs, signal));
    }
    const json = JSON.stringify({
      id: completion.id,
      object: 'chat.completion',
      created: completion.created,
      model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [{ index: 0, message: { role: 'assistant', content: completion.words.join(' '), refusal: null }, logprobs: null, finish_reason: completion.finishReason }],
      usage: usageOf(completion),
    });
    return response({ 'content-type': 'application/json' }, once(Buffer.from(json)));
  }
}

function usageOf(completion: SimulatedCompletion): Record<string, unknown> {
  const completionTokens = completion.words.length;
  return {
    prompt_tokens: completion.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: completion.promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

async function* streamChunks(completion: SimulatedCompletion, model: string, usageChunk: boolean, delayMs: number, signal: CallerSignal): AsyncIterable<Buffer> {
  const base = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model, system_fingerprint: SYSTEM_FINGERPRINT };
  const usageField = usageChunk ? { usage: null } : {};
  const event = (choices: unknown[], extra: Record<string, unknown> = usageField): Buffer =>
    Buffer.from(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  yield event([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]);
  for (let index = 0; index < completion.words.length; index += 1) {
    if (delayMs > 0) await sleep(delayMs, signal);
    const text = index === 0 ? completion.words[index] : ` ${completion.words[index]}`;
    yield event([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]);
  }
  yield event([{ index: 0, delta: {}, logprobs: null, finish_reason: completion.finishReason }]);
  if (usageChunk) yield event([], { usage: usageOf(completion) });
  yield Buffer.from('data: [DONE]\n\n');
}

function response(headers: Record<string, string>, body: AsyncIterable<Buffer>): UpstreamResponse {
  return { status: 200, headers, body, discard: () => {} };
}

async function* once(buffer: Buffer): AsyncIterable<Buffer> {
  yield buffer;
}

function sleep(ms: number, signal: CallerSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
