import { CLOSE } from '../realtime-events.js';
import { closeReasonText } from '../realtime-dialect.js';
import { objectOf, stringOf, type Translated } from './frame-translator.js';
import { requestResponse } from './gemini-client-to-openai.js';
import type { GeminiOnOpenAIState } from './gemini-on-openai-state.js';
import { OPENAI_PCM_RATE } from './pcm16-resampler.js';
import { geminiUsageOfOpenAI } from './usage-mapping.js';

type ServerMessage = Record<string, unknown>;

/** Upstream errors the translation's own timing can cause (OpenAI's server detects turns too): the session goes on. */
const BENIGN_ERRORS = new Set(['input_audio_buffer_commit_empty', 'conversation_already_has_active_response', 'response_cancel_not_active']);

function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return {};
  }
}

function responseDone(state: GeminiOnOpenAIState, event: Record<string, unknown>, messages: ServerMessage[], toUpstream: Array<Record<string, unknown>>): void {
  const response = objectOf(event.response);
  const status = stringOf(response.status) ?? 'completed';
  const usageMetadata = geminiUsageOfOpenAI(response.usage);
  if (status === 'cancelled' && !state.interruptedSent && state.responseHasContent) messages.push({ serverContent: { interrupted: true } });
  if (state.responseHasContent && status === 'completed') messages.push({ serverContent: { generationComplete: true } });
  // A turn of only function calls ends with its usage (the caller answers with toolResponse); any other with turnComplete.
  messages.push(state.responseOnlyCalls && state.responseHasContent ? { usageMetadata } : { serverContent: { turnComplete: true }, usageMetadata });
  state.responseActive = false;
  if (state.responseWanted) {
    state.responseWanted = false;
    requestResponse(state, toUpstream);
  }
}

/**
 * One OpenAI Realtime server event as Gemini Live server messages: the first `session.updated` (the caller's setup
 * applied) is `setupComplete`; audio deltas are `modelTurn` inline PCM at 24 kHz, text deltas text parts, the output
 * transcript `outputTranscription` and the input transcription `inputTranscription` (when the setup asked for them);
 * a finished function call is a `toolCall`; speech detected over an answer is `interrupted`; `response.done` is
 * `generationComplete` and `turnComplete` with its usage as `usageMetadata`, token for token. An upstream error other
 * than the translation's own timing ends the session with Google's codes (1007 for the caller's input, 1011 else).
 */
export function openAIServerToGemini(state: GeminiOnOpenAIState, event: Record<string, unknown>): Translated {
  const messages: ServerMessage[] = [];
  const toUpstream: Array<Record<string, unknown>> = [];
  const content = (parts: unknown[]): void => {
    state.responseHasContent = true;
    messages.push({ serverContent: { modelTurn: { role: 'model', parts } } });
  };
  switch (event.type) {
    case 'session.updated':
      if (!state.setupAnswered) {
        state.setupAnswered = true;
        messages.push({ setupComplete: {} });
      }
      break;
    case 'response.created':
      state.responseActive = true;
      state.responseHasContent = false;
      state.responseOnlyCalls = true;
      state.interruptedSent = false;
      break;
    case 'response.output_audio.delta':
      state.responseOnlyCalls = false;
      content([{ inlineData: { mimeType: `audio/pcm;rate=${OPENAI_PCM_RATE}`, data: stringOf(event.delta) ?? '' } }]);
      break;
    case 'response.output_text.delta':
      state.responseOnlyCalls = false;
      content([{ text: stringOf(event.delta) ?? '' }]);
      break;
    case 'response.output_audio_transcript.delta':
      if (state.caller.outputTranscription) messages.push({ serverContent: { outputTranscription: { text: stringOf(event.delta) ?? '' } } });
      break;
    case 'conversation.item.input_audio_transcription.delta':
      if (state.caller.inputTranscription) {
        state.transcribedItems.add(stringOf(event.item_id) ?? '');
        messages.push({ serverContent: { inputTranscription: { text: stringOf(event.delta) ?? '' } } });
      }
      break;
    case 'conversation.item.input_audio_transcription.completed':
      if (state.caller.inputTranscription) {
        const streamed = state.transcribedItems.delete(stringOf(event.item_id) ?? '');
        messages.push({ serverContent: { inputTranscription: { text: streamed ? '' : stringOf(event.transcript) ?? '', finished: true } } });
      }
      break;
    case 'response.function_call_arguments.done':
      state.responseHasContent = true;
      messages.push({ toolCall: { functionCalls: [{ id: stringOf(event.call_id) ?? '', name: stringOf(event.name) ?? '', args: parseArguments(stringOf(event.arguments) ?? '') }] } });
      break;
    case 'input_audio_buffer.speech_started':
      if (state.responseActive && state.responseHasContent && !state.interruptedSent) {
        state.interruptedSent = true;
        messages.push({ serverContent: { interrupted: true } });
      }
      break;
    case 'input_audio_buffer.committed':
      state.uncommittedAudio = false;
      break;
    case 'response.done':
      responseDone(state, event, messages, toUpstream);
      break;
    case 'error': {
      const error = objectOf(event.error);
      if (BENIGN_ERRORS.has(stringOf(error.code) ?? '')) break;
      return {
        toUpstream: [],
        toClient: messages.map((message) => JSON.stringify(message)),
        end: { code: error.type === 'invalid_request_error' ? CLOSE.invalidPayload : CLOSE.internal, reason: closeReasonText(stringOf(error.message) ?? 'The upstream reported an error.') },
      };
    }
    default:
      break;
  }
  return { toUpstream: toUpstream.map((message) => JSON.stringify(message)), toClient: messages.map((message) => JSON.stringify(message)) };
}
