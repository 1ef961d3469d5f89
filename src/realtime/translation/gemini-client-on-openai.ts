import { emptyTranslated, objectOf, parseObject, type FrameTranslator, type Translated } from './frame-translator.js';
import { geminiClientToOpenAI } from './gemini-client-to-openai.js';
import { GeminiOnOpenAIState } from './gemini-on-openai-state.js';
import { openAIServerToGemini } from './openai-server-to-gemini.js';
import { openAISessionOfSetup } from './session-config.js';
import { CLOSE } from '../realtime-events.js';

/** The first tool of a setup other than function declarations (Google Search, code execution, …), else null. */
function unsupportedTool(tools: unknown): string | null {
  for (const tool of Array.isArray(tools) ? tools : []) {
    const kind = Object.keys(objectOf(tool)).find((key) => key !== 'functionDeclarations');
    if (kind !== undefined) return kind;
  }
  return null;
}

/**
 * A Gemini Live caller on an OpenAI Realtime upstream: its setup is the session's first `session.update`, and each
 * frame is translated by its direction's module. Messages to the caller are JSON in binary frames, as Google sends them.
 */
export class GeminiClientOnOpenAI implements FrameTranslator {
  readonly clientBinary = true;
  readonly state: GeminiOnOpenAIState;

  constructor(setup: Record<string, unknown>) {
    this.state = new GeminiOnOpenAIState(setup);
  }

  start(): Translated {
    const unsupported = unsupportedTool(this.state.setup.tools);
    if (unsupported !== null) return { ...emptyTranslated(), end: { code: CLOSE.invalidPayload, reason: `The tool '${unsupported}' cannot be used with this model (it is served over OpenAI Realtime): only functionDeclarations are.` } };
    return { toUpstream: [JSON.stringify({ type: 'session.update', session: openAISessionOfSetup(this.state.setup) })], toClient: [] };
  }

  fromClient(frame: Buffer): Translated {
    const message = parseObject(frame);
    if (message === null) return { ...emptyTranslated(), end: { code: CLOSE.invalidPayload, reason: 'Invalid JSON payload received.' } };
    return geminiClientToOpenAI(this.state, message);
  }

  fromUpstream(frame: Buffer): Translated {
    const event = parseObject(frame);
    return event === null ? emptyTranslated() : openAIServerToGemini(this.state, event);
  }
}
