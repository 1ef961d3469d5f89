import { CLOSE } from '../realtime-events.js';
import { objectOf, stringOf, type Translated } from './frame-translator.js';
import type { GeminiOnOpenAIState } from './gemini-on-openai-state.js';
import { GEMINI_INPUT_PCM_RATE, OPENAI_PCM_RATE, pcmRateOf } from './pcm16-resampler.js';

type ClientEvent = Record<string, unknown>;

/** Asks for a response now, or as the running one ends. */
export function requestResponse(state: GeminiOnOpenAIState, events: ClientEvent[]): void {
  if (state.responseActive) {
    state.responseWanted = true;
    return;
  }
  state.responseActive = true;
  state.responseHasContent = false;
  state.responseOnlyCalls = true;
  state.interruptedSent = false;
  events.push({ type: 'response.create' });
}

function invalid(reason: string): Translated {
  // Google ends a session on input it cannot take with 1007 and the reason.
  return { toUpstream: [], toClient: [], end: { code: CLOSE.invalidPayload, reason } };
}

function userText(text: string): ClientEvent {
  return { type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } };
}

function clientContent(state: GeminiOnOpenAIState, content: Record<string, unknown>, events: ClientEvent[]): string | null {
  for (const turn of Array.isArray(content.turns) ? content.turns : []) {
    const fields = objectOf(turn);
    const model = fields.role === 'model';
    let text = '';
    for (const part of Array.isArray(fields.parts) ? fields.parts : []) {
      const partText = objectOf(part).text;
      if (typeof partText !== 'string') return 'Only text parts of clientContent turns can be sent to this model (it is served over OpenAI Realtime).';
      text += partText;
    }
    events.push(model
      ? { type: 'conversation.item.create', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] } }
      : userText(text));
  }
  if (content.turnComplete === true) requestResponse(state, events);
  return null;
}

function audioChunk(state: GeminiOnOpenAIState, blob: Record<string, unknown>, events: ClientEvent[]): string | null {
  const mimeType = stringOf(blob.mimeType) ?? '';
  if (!mimeType.startsWith('audio/pcm')) return `Only audio/pcm input can be sent to this model (it is served over OpenAI Realtime), not '${mimeType}'.`;
  const rate = pcmRateOf(mimeType, GEMINI_INPUT_PCM_RATE);
  const raw = Buffer.from(stringOf(blob.data) ?? '', 'base64');
  const audio = rate === OPENAI_PCM_RATE ? raw : state.inputResampler(rate).push(raw);
  if (audio.length === 0) return null;
  state.uncommittedAudio = true;
  events.push({ type: 'input_audio_buffer.append', audio: audio.toString('base64') });
  return null;
}

function realtimeInput(state: GeminiOnOpenAIState, input: Record<string, unknown>, events: ClientEvent[]): string | null {
  if (input.activityStart !== undefined && state.responseActive && state.responseHasContent) {
    // The caller speaks over the answer (manual activity): the answer stops.
    events.push({ type: 'response.cancel' });
  }
  const blobs = [input.audio, ...(Array.isArray(input.mediaChunks) ? input.mediaChunks : [])].filter((blob) => blob !== undefined);
  for (const blob of blobs) {
    const refusal = audioChunk(state, objectOf(blob), events);
    if (refusal !== null) return refusal;
  }
  if (input.video !== undefined) return 'Video input cannot be sent to this model (it is served over OpenAI Realtime).';
  if (typeof input.text === 'string' && input.text !== '') {
    events.push(userText(input.text));
    requestResponse(state, events);
  }
  if ((input.activityEnd !== undefined || input.audioStreamEnd === true) && state.uncommittedAudio) {
    state.uncommittedAudio = false;
    events.push({ type: 'input_audio_buffer.commit' });
    requestResponse(state, events);
  }
  return null;
}

function toolResponse(state: GeminiOnOpenAIState, response: Record<string, unknown>, events: ClientEvent[]): void {
  for (const answer of Array.isArray(response.functionResponses) ? response.functionResponses : []) {
    const fields = objectOf(answer);
    events.push({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: stringOf(fields.id) ?? '', output: JSON.stringify(fields.response ?? {}) } });
  }
  requestResponse(state, events);
}

/**
 * One Gemini Live client message as OpenAI Realtime client events: `clientContent` turns are conversation items (a
 * complete turn asks for a response), `realtimeInput` audio is resampled from its rate (16 kHz) to 24 kHz into the
 * input buffer and its end (`audioStreamEnd`, `activityEnd`) commits it and asks for a response, `activityStart` over
 * an answer cancels it, `text` is a user item answered, `toolResponse` answers are function call outputs. A second
 * `setup`, video and non-text turn parts end the session with 1007, as Google does for input it cannot take.
 */
export function geminiClientToOpenAI(state: GeminiOnOpenAIState, message: Record<string, unknown>): Translated {
  const events: ClientEvent[] = [];
  let refusal: string | null = null;
  if (message.setup !== undefined) return invalid('The setup was already sent: it is the first message only.');
  if (message.clientContent !== undefined) refusal = clientContent(state, objectOf(message.clientContent), events);
  else if (message.realtimeInput !== undefined) refusal = realtimeInput(state, objectOf(message.realtimeInput), events);
  else if (message.toolResponse !== undefined) toolResponse(state, objectOf(message.toolResponse), events);
  else refusal = `Unknown message '${Object.keys(message)[0] ?? ''}': this model (served over OpenAI Realtime) takes clientContent, realtimeInput and toolResponse.`;
  if (refusal !== null) return invalid(refusal);
  return { toUpstream: events.map((event) => JSON.stringify(event)), toClient: [] };
}
