import { newId } from '../../shared/ids.js';
import type { OpenAIResponseBuilder } from './openai-response-builder.js';
import { GEMINI_INPUT_PCM_RATE, OPENAI_PCM_RATE, Pcm16Resampler } from './pcm16-resampler.js';
import { defaultOpenAISession, type OpenAISessionConfig } from './session-config.js';

/** Gemini messages queued before the upstream's `setupComplete` are bounded: a caller cannot make the gateway buffer without end. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

/**
 * The state of an OpenAI Realtime caller's session on a Gemini Live upstream. Gemini takes its configuration once, in
 * `setup`: the setup is sent with the caller's first event that needs the model (a conversation item, audio, a
 * response), built from the session as the `session.update`s before it left it; Gemini messages wait until the
 * upstream's `setupComplete`.
 */
export class OpenAIOnGeminiState {
  config: OpenAISessionConfig = defaultOpenAISession();
  readonly sessionId = newId('sess');
  readonly conversationId = newId('conv');
  /** The setup as sent (JSON), null before. */
  sentSetup: string | null = null;
  setupComplete = false;
  queued: string[] = [];
  queuedBytes = 0;
  /** The caller's text turns, sent with its next `response.create` (or before its audio turn ends). */
  pendingTurns: Array<{ role: 'user' | 'model'; parts: Array<{ text: string }> }> = [];
  /** Gemini answers the last input on its own (an ended audio turn, a tool response): the next `response.create` is that answer. */
  answerExpected = false;
  /** Audio appended since the last commit. */
  uncommittedAudio = false;
  /** Manual turns: `activityStart` was sent and no `activityEnd` yet. */
  activityOpen = false;
  /** Bytes of caller audio (24 kHz PCM16) so far: the clock of `audio_start_ms`. */
  inputAudioBytes = 0;
  /** Bytes of caller audio since the last commit (the committed item's length). */
  audioSinceCommit = 0;
  /** The last committed audio item, which Gemini's input transcription is written to, its transcript so far and its bytes. */
  inputItem: { id: string; transcript: string; bytes: number } | null = null;
  lastItemId: string | null = null;
  response: OpenAIResponseBuilder | null = null;
  /** Function names by call id, for the tool responses (Gemini names the function answered). */
  readonly callNames = new Map<string, string>();
  readonly inputResampler = new Pcm16Resampler(OPENAI_PCM_RATE, GEMINI_INPUT_PCM_RATE);
  readonly #outputResamplers = new Map<number, Pcm16Resampler>();

  constructor(readonly model: string, readonly upstreamModel: string) {}

  /** The resampler of Gemini's output audio at `rate` to the caller's 24 kHz (one per rate, so the stream is continuous). */
  outputResampler(rate: number): Pcm16Resampler {
    let resampler = this.#outputResamplers.get(rate);
    if (resampler === undefined) {
      resampler = new Pcm16Resampler(rate, OPENAI_PCM_RATE);
      this.#outputResamplers.set(rate, resampler);
    }
    return resampler;
  }
}
