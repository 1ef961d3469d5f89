import { newId } from '../../shared/ids.js';
import { geminiServerToOpenAI } from './gemini-server-to-openai.js';
import { openAIClientToGemini, openAIError } from './openai-client-to-gemini.js';
import { OpenAIOnGeminiState } from './openai-on-gemini-state.js';
import { emptyTranslated, parseObject, type FrameTranslator, type Translated } from './frame-translator.js';
import { applySessionUpdate, openAISessionObject } from './session-config.js';

/**
 * An OpenAI Realtime caller on a Gemini Live upstream: the caller hears `session.created` as the session starts (the
 * upstream socket is open; Gemini's `setup` follows with the caller's first event that needs the model), and each
 * frame is translated by its direction's module.
 */
export class OpenAIClientOnGemini implements FrameTranslator {
  readonly clientBinary = false;
  readonly state: OpenAIOnGeminiState;
  /** Why a client secret's session configuration could not be taken (told to the caller as the session starts). */
  readonly #refusal: { param: string; message: string } | null = null;

  /** `session`: a client secret's session configuration, applied before the caller's own updates. */
  constructor(model: string, upstreamModel: string, session: unknown = null) {
    this.state = new OpenAIOnGeminiState(model, upstreamModel);
    if (session !== null && session !== undefined) {
      const configured = applySessionUpdate(this.state.config, session);
      if ('param' in configured) this.#refusal = configured;
      else this.state.config = configured;
    }
  }

  start(): Translated {
    const created = { event_id: newId('event'), type: 'session.created', session: openAISessionObject(this.state.config, this.state.sessionId, this.state.model) };
    const toClient = [JSON.stringify(created)];
    if (this.#refusal !== null) toClient.push(JSON.stringify({ event_id: newId('event'), ...openAIError('invalid_value', `The client secret's session configuration was not applied: ${this.#refusal.message}`, null, this.#refusal.param) }));
    return { toUpstream: [], toClient };
  }

  fromClient(frame: Buffer): Translated {
    const event = parseObject(frame);
    if (event === null) return { ...emptyTranslated(), toClient: [JSON.stringify({ event_id: newId('event'), ...openAIError('invalid_json', 'The event is not a JSON object.', null) })] };
    return openAIClientToGemini(this.state, event);
  }

  fromUpstream(frame: Buffer): Translated {
    const message = parseObject(frame);
    return message === null ? emptyTranslated() : geminiServerToOpenAI(this.state, message);
  }
}
