import { OPENAI_PCM_RATE, Pcm16Resampler } from './pcm16-resampler.js';
import { geminiCallerSetup, type GeminiCallerSetup } from './session-config.js';

/**
 * The state of a Gemini Live caller's session on an OpenAI Realtime upstream. The caller's setup becomes the
 * session's first `session.update`, answered to the caller with `setupComplete` when the upstream confirms it. OpenAI
 * runs one response at a time: a response asked for while one is running is asked for as it ends.
 */
export class GeminiOnOpenAIState {
  readonly caller: GeminiCallerSetup;
  setupAnswered = false;
  /** Audio appended since the upstream last committed the buffer. */
  uncommittedAudio = false;
  responseActive = false;
  /** The running response has written content (an interruption is told to the caller only then). */
  responseHasContent = false;
  /** The running response's output is only function calls (Gemini ends such a turn without `turnComplete`). */
  responseOnlyCalls = true;
  interruptedSent = false;
  /** A response was asked for while one ran: it is asked for as that one ends. */
  responseWanted = false;
  /** Input transcription items whose deltas were passed on (their completion then only marks them finished). */
  readonly transcribedItems = new Set<string>();
  readonly #inputResamplers = new Map<number, Pcm16Resampler>();

  constructor(readonly setup: Record<string, unknown>) {
    this.caller = geminiCallerSetup(setup);
  }

  /** The resampler of the caller's audio at `rate` to OpenAI's 24 kHz (one per rate, so the stream is continuous). */
  inputResampler(rate: number): Pcm16Resampler {
    let resampler = this.#inputResamplers.get(rate);
    if (resampler === undefined) {
      resampler = new Pcm16Resampler(rate, OPENAI_PCM_RATE);
      this.#inputResamplers.set(rate, resampler);
    }
    return resampler;
  }
}
