import { newId } from '../../shared/ids.js';
import { objectOf, stringOf, type Translated } from './frame-translator.js';
import type { OpenAIOnGeminiState } from './openai-on-gemini-state.js';
import { OpenAIResponseBuilder } from './openai-response-builder.js';
import { OPENAI_PCM_RATE, pcmRateOf } from './pcm16-resampler.js';
import { openAIUsageOfGemini } from './usage-mapping.js';

type ServerEvent = Record<string, unknown>;

function responseOf(state: OpenAIOnGeminiState, events: ServerEvent[]): OpenAIResponseBuilder {
  if (state.response === null) {
    state.response = new OpenAIResponseBuilder(state.conversationId, state.config.outputModalities);
    events.push(...state.response.created());
  }
  return state.response;
}

/** The caller's committed audio item's transcript so far, as OpenAI's transcription events. */
function inputTranscription(state: OpenAIOnGeminiState, transcription: Record<string, unknown>, events: ServerEvent[]): void {
  const item = state.inputItem;
  const text = stringOf(transcription.text) ?? '';
  if (item === null) return;
  if (text !== '') {
    item.transcript += text;
    events.push({ type: 'conversation.item.input_audio_transcription.delta', item_id: item.id, content_index: 0, delta: text });
  }
  if (transcription.finished === true) finishInputTranscription(state, events);
}

function finishInputTranscription(state: OpenAIOnGeminiState, events: ServerEvent[]): void {
  const item = state.inputItem;
  if (item === null || item.transcript === '') return;
  state.inputItem = null;
  // The transcript's usage is the committed audio's length (24 kHz PCM16: 48 000 bytes a second).
  events.push({ type: 'conversation.item.input_audio_transcription.completed', item_id: item.id, content_index: 0, transcript: item.transcript, usage: { type: 'duration', seconds: item.bytes / (OPENAI_PCM_RATE * 2) } });
}

function modelTurn(state: OpenAIOnGeminiState, content: Record<string, unknown>, events: ServerEvent[]): void {
  const parts = objectOf(content.modelTurn).parts;
  for (const part of Array.isArray(parts) ? parts : []) {
    const fields = objectOf(part);
    const response = responseOf(state, events);
    // What Gemini writes after the caller cancelled is dropped; thoughts are not part of the answer.
    if (response.status !== 'in_progress' || fields.thought === true) continue;
    if (typeof fields.text === 'string' && fields.text !== '') events.push(...response.text(fields.text));
    const blob = objectOf(fields.inlineData);
    const mimeType = stringOf(blob.mimeType) ?? '';
    if (mimeType.startsWith('audio/pcm') && typeof blob.data === 'string') {
      const rate = pcmRateOf(mimeType, OPENAI_PCM_RATE);
      const audio = rate === OPENAI_PCM_RATE ? blob.data : state.outputResampler(rate).push(Buffer.from(blob.data, 'base64')).toString('base64');
      events.push(...response.audio(audio));
    }
  }
}

/**
 * One Gemini Live server message as OpenAI Realtime server events: `setupComplete` releases the caller's queued
 * messages; the first model content, tool call or usage of a turn opens a response (`response.created`); text parts
 * are `response.output_text.delta`, audio parts `response.output_audio.delta` (resampled to 24 kHz when Gemini's rate
 * differs), the output transcription `response.output_audio_transcript.delta`, the input transcription the committed
 * audio item's transcription events; a tool call is a whole function call item; `interrupted` marks the response
 * cancelled (`turn_detected`) with OpenAI's `input_audio_buffer.speech_started`; the turn's `usageMetadata` ends it
 * with `response.done` and the usage token for token.
 */
export function geminiServerToOpenAI(state: OpenAIOnGeminiState, message: Record<string, unknown>): Translated {
  const out: Translated = { toUpstream: [], toClient: [] };
  const events: ServerEvent[] = [];
  if (message.setupComplete !== undefined && !state.setupComplete) {
    state.setupComplete = true;
    out.toUpstream.push(...state.queued);
    state.queued = [];
    state.queuedBytes = 0;
  }
  const content = objectOf(message.serverContent);
  if (message.serverContent !== undefined) {
    if (content.inputTranscription !== undefined) inputTranscription(state, objectOf(content.inputTranscription), events);
    if (content.modelTurn !== undefined) {
      finishInputTranscription(state, events);
      modelTurn(state, content, events);
    }
    const transcript = stringOf(objectOf(content.outputTranscription).text);
    if (transcript !== undefined && transcript !== '') {
      const response = responseOf(state, events);
      if (response.status === 'in_progress') events.push(...response.transcript(transcript));
    }
    if (content.interrupted === true && state.response !== null) {
      if (state.response.status === 'in_progress') {
        state.response.status = 'cancelled';
        state.response.statusDetails = { type: 'cancelled', reason: 'turn_detected' };
      }
      events.push({ type: 'input_audio_buffer.speech_started', audio_start_ms: Math.floor(state.inputAudioBytes / (OPENAI_PCM_RATE * 2 / 1000)), item_id: newId('item') });
    }
    if ((content.generationComplete === true || content.turnComplete === true) && state.response !== null) events.push(...state.response.finishMessage());
    if (content.turnComplete === true) finishInputTranscription(state, events);
  }
  const calls = objectOf(message.toolCall).functionCalls;
  for (const call of Array.isArray(calls) ? calls : []) {
    const fields = objectOf(call);
    const response = responseOf(state, events);
    const callId = stringOf(fields.id) ?? newId('call');
    const name = stringOf(fields.name) ?? '';
    state.callNames.set(callId, name);
    if (response.status === 'in_progress') events.push(...response.functionCall(callId, name, JSON.stringify(fields.args ?? {})));
  }
  if (message.usageMetadata !== undefined) {
    const response = responseOf(state, events);
    events.push(...response.done(openAIUsageOfGemini(message.usageMetadata)));
    state.response = null;
  }
  for (const event of events) out.toClient.push(JSON.stringify({ event_id: newId('event'), ...event }));
  return out;
}
