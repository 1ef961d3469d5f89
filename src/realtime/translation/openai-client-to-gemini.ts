import { geminiModelResource } from '../../upstreams/gemini/gemini-endpoint.js';
import { newId } from '../../shared/ids.js';
import { objectOf, stringOf, type Translated } from './frame-translator.js';
import { MAX_QUEUED_BYTES, type OpenAIOnGeminiState } from './openai-on-gemini-state.js';
import { GEMINI_INPUT_PCM_RATE } from './pcm16-resampler.js';
import { applySessionUpdate, geminiSetupOfSession, openAISessionObject } from './session-config.js';

type ServerEvent = Record<string, unknown>;

/** OpenAI's `error` server event (an invalid client event leaves the session open, as OpenAI's server does). */
export function openAIError(code: string, message: string, eventId: unknown, param: string | null = null): ServerEvent {
  return { type: 'error', error: { type: 'invalid_request_error', code, message, param, event_id: typeof eventId === 'string' ? eventId : null } };
}

/** Gemini's `setup` for the session as it stands, with the channel's model. */
function setupMessage(state: OpenAIOnGeminiState): string {
  return JSON.stringify({ setup: { model: geminiModelResource(state.upstreamModel), ...geminiSetupOfSession(state.config) } });
}

/** Sends a Gemini client message: after the setup (sent first, with the first message that needs the model), queued until `setupComplete`. */
function toGemini(state: OpenAIOnGeminiState, out: Translated, message: Record<string, unknown>): void {
  if (state.sentSetup === null) {
    state.sentSetup = setupMessage(state);
    out.toUpstream.push(state.sentSetup);
  }
  const frame = JSON.stringify(message);
  if (state.setupComplete) {
    out.toUpstream.push(frame);
    return;
  }
  state.queuedBytes += frame.length;
  if (state.queuedBytes > MAX_QUEUED_BYTES) {
    out.end = { code: 1011, reason: 'too much input before the upstream session opened' };
    return;
  }
  state.queued.push(frame);
}

function flushTurns(state: OpenAIOnGeminiState, out: Translated, turnComplete: boolean): void {
  if (state.pendingTurns.length === 0 && !turnComplete) return;
  toGemini(state, out, { clientContent: { turns: state.pendingTurns, turnComplete } });
  state.pendingTurns = [];
}

/** The text of an OpenAI message item's content parts of `types`; null when a part is of another kind. */
function itemText(content: unknown, types: ReadonlySet<string>): string | null {
  let text = '';
  for (const part of Array.isArray(content) ? content : []) {
    const fields = objectOf(part);
    if (!types.has(String(fields.type)) || typeof fields.text !== 'string') return null;
    text += fields.text;
  }
  return text;
}

const USER_TEXT = new Set(['input_text', 'text']);
const ASSISTANT_TEXT = new Set(['output_text', 'text']);

/** A function's output as Gemini's `response` object: the JSON object it is, else `{output: <text>}`. */
function functionResponse(output: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(output);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Not JSON: passed as text.
  }
  return { output };
}

function conversationItem(state: OpenAIOnGeminiState, out: Translated, event: Record<string, unknown>, client: ServerEvent[]): void {
  const item = objectOf(event.item);
  const type = item.type;
  if (type === 'message') {
    const role = item.role === 'assistant' ? 'model' : 'user';
    const text = itemText(item.content, role === 'model' ? ASSISTANT_TEXT : USER_TEXT);
    if (text === null) {
      client.push(openAIError('unsupported_content', 'Only text content items can be added when the model is served over Gemini Live (send audio with input_audio_buffer.append).', event.event_id, 'item.content'));
      return;
    }
    state.pendingTurns.push({ role, parts: [{ text }] });
    state.answerExpected = false;
  } else if (type === 'function_call_output') {
    const callId = stringOf(item.call_id) ?? '';
    flushTurns(state, out, false);
    toGemini(state, out, { toolResponse: { functionResponses: [{ id: callId, name: state.callNames.get(callId) ?? '', response: functionResponse(stringOf(item.output) ?? '') }] } });
    // Gemini goes on answering once it has the function's result.
    state.answerExpected = true;
  } else {
    client.push(openAIError('unsupported_item', `Items of type '${String(type)}' cannot be added when the model is served over Gemini Live.`, event.event_id, 'item.type'));
    return;
  }
  const id = stringOf(item.id) ?? newId('item');
  const created = { ...item, id, object: 'realtime.item', status: 'completed' };
  client.push({ type: 'conversation.item.added', previous_item_id: state.lastItemId, item: created });
  client.push({ type: 'conversation.item.done', previous_item_id: state.lastItemId, item: created });
  state.lastItemId = id;
}

function sessionUpdate(state: OpenAIOnGeminiState, event: Record<string, unknown>, client: ServerEvent[]): void {
  const next = applySessionUpdate(state.config, event.session);
  if ('param' in next) {
    client.push(openAIError('invalid_value', next.message, event.event_id, next.param));
    return;
  }
  if (state.sentSetup !== null && JSON.stringify(geminiSetupOfSession(next)) !== JSON.stringify(geminiSetupOfSession(state.config))) {
    client.push(openAIError('session_already_started', 'This model is served over Gemini Live, which fixes the session configuration once the conversation starts: send session.update before the first conversation item, audio or response.create.', event.event_id, 'session'));
    return;
  }
  state.config = next;
  client.push({ type: 'session.updated', session: openAISessionObject(state.config, state.sessionId, state.model) });
}

/**
 * One OpenAI Realtime client event as Gemini Live client messages (and the server events OpenAI answers it with
 * itself): session updates shape the setup, text items become turns sent with the next `response.create`, audio is
 * resampled from 24 to 16 kHz into `realtimeInput`, a commit ends the audio turn (`activityEnd` with manual turns,
 * `audioStreamEnd` with server turn detection) and Gemini answers it, function outputs become `toolResponse`. Gemini
 * cannot cancel a turn: `response.cancel` drops the rest of the answer and ends the response as cancelled when Gemini
 * reports the turn's usage.
 */
export function openAIClientToGemini(state: OpenAIOnGeminiState, event: Record<string, unknown>): Translated {
  const out: Translated = { toUpstream: [], toClient: [] };
  const client: ServerEvent[] = [];
  switch (event.type) {
    case 'session.update':
      sessionUpdate(state, event, client);
      break;
    case 'conversation.item.create':
      conversationItem(state, out, event, client);
      break;
    case 'input_audio_buffer.append': {
      const audio = Buffer.from(stringOf(event.audio) ?? '', 'base64');
      if (audio.length === 0) break;
      if (state.config.turnDetection === null && !state.activityOpen) {
        toGemini(state, out, { realtimeInput: { activityStart: {} } });
        state.activityOpen = true;
      }
      state.inputAudioBytes += audio.length;
      state.uncommittedAudio = true;
      state.answerExpected = false;
      state.audioSinceCommit += audio.length;
      const resampled = state.inputResampler.push(audio);
      if (resampled.length > 0) toGemini(state, out, { realtimeInput: { audio: { data: resampled.toString('base64'), mimeType: `audio/pcm;rate=${GEMINI_INPUT_PCM_RATE}` } } });
      break;
    }
    case 'input_audio_buffer.commit': {
      if (!state.uncommittedAudio) {
        client.push(openAIError('input_audio_buffer_commit_empty', 'Error committing input audio buffer: the buffer is empty.', event.event_id));
        break;
      }
      flushTurns(state, out, false);
      if (state.activityOpen) {
        toGemini(state, out, { realtimeInput: { activityEnd: {} } });
        state.activityOpen = false;
      } else {
        toGemini(state, out, { realtimeInput: { audioStreamEnd: true } });
      }
      state.uncommittedAudio = false;
      state.answerExpected = true;
      const id = newId('item');
      client.push({ type: 'input_audio_buffer.committed', previous_item_id: state.lastItemId, item_id: id });
      // The committed buffer is a user message of its audio in the conversation (the audio itself is not repeated).
      const item = { id, object: 'realtime.item', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_audio', transcript: null }] };
      client.push({ type: 'conversation.item.added', previous_item_id: state.lastItemId, item });
      client.push({ type: 'conversation.item.done', previous_item_id: state.lastItemId, item });
      state.inputItem = { id, transcript: '', bytes: state.audioSinceCommit };
      state.audioSinceCommit = 0;
      state.lastItemId = id;
      break;
    }
    case 'input_audio_buffer.clear':
      // Gemini has already heard what was streamed: nothing can be taken back upstream.
      state.uncommittedAudio = false;
      state.audioSinceCommit = 0;
      client.push({ type: 'input_audio_buffer.cleared' });
      break;
    case 'response.create': {
      const refused = Object.keys(objectOf(event.response)).find((field) => field !== 'metadata');
      if (refused !== undefined) {
        client.push(openAIError('unsupported_response_parameter', `'response.${refused}' cannot be applied when the model is served over Gemini Live: a response there uses the session's configuration and conversation.`, event.event_id, `response.${refused}`));
        break;
      }
      if (state.response !== null && !state.answerExpected) {
        client.push(openAIError('conversation_already_has_active_response', 'Conversation already has an active response in progress.', event.event_id));
        break;
      }
      if (state.answerExpected) {
        // The answer to the ended audio turn or the tool response is already coming.
        state.answerExpected = false;
        flushTurns(state, out, false);
        break;
      }
      flushTurns(state, out, true);
      break;
    }
    case 'response.cancel':
      if (state.response === null) {
        client.push(openAIError('response_cancel_not_active', 'Cancellation failed: no active response found.', event.event_id));
        break;
      }
      if (state.response.status === 'in_progress') {
        state.response.status = 'cancelled';
        state.response.statusDetails = { type: 'cancelled', reason: 'client_cancelled' };
      }
      break;
    case 'conversation.item.truncate':
      // Gemini keeps in its context only what it had sent when a turn is cut short; the truncation is acknowledged.
      client.push({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: event.content_index ?? 0, audio_end_ms: event.audio_end_ms ?? 0 });
      break;
    case 'output_audio_buffer.clear':
      break;
    default:
      client.push(openAIError('unsupported_event', `The event '${String(event.type)}' is not supported when the model is served over Gemini Live.`, event.event_id, 'type'));
  }
  for (const serverEvent of client) out.toClient.push(JSON.stringify({ event_id: newId('event'), ...serverEvent }));
  return out;
}
