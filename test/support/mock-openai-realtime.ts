/**
 * A mock of OpenAI's Realtime API over WebSocket (`/v1/realtime?model=…`, and Azure's `/openai/v1/realtime`), speaking
 * the GA event protocol as the `openai` SDK types it: `session.created` on connect; `session.update`,
 * `conversation.item.create`, `input_audio_buffer.append|commit|clear`, `response.create` and `response.cancel`
 * answered with their server events; a response streams `response.created`, output item and content part events,
 * `response.output_audio.delta` (base64 PCM16) and transcript deltas, then `response.done` with usage. Usage is a
 * function of what the session received, so tests can compute every charge: input text tokens are ceil(chars / 4) of
 * the conversation so far, input audio tokens one per 800 bytes of PCM16 (24 kHz, 1/30 s), cached tokens the whole
 * input of the previous response, output `outputTextTokens` text and `outputAudioTokens` audio tokens. A session whose
 * `output_modalities` is `['text']` gets `response.output_text.delta`s (and only text tokens); a user text naming a
 * function the session declares gets a function call response first (`{"city":"Paris"}`, 8 output text tokens),
 * answered by the caller's `function_call_output` item. A session with `audio.input.transcription` gets each committed
 * buffer's `conversation.item.input_audio_transcription.completed` (`heard <bytes> bytes`).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export interface MockRealtimeOptions {
  /** The Bearer key (or Azure `api-key`) the mock accepts; others get 401. */
  apiKey?: string;
  outputTextTokens?: number;
  outputAudioTokens?: number;
  /** Audio delta events per response, each `deltaBytes` of PCM16 (base64 on the wire). */
  deltas?: number;
  deltaBytes?: number;
  /** Pause between deltas (ms). */
  deltaDelayMs?: number;
}

export interface RealtimeConnection {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Client events received, by type. */
  received: string[];
  /** The client events received, parsed, in order. */
  events: Array<Record<string, unknown>>;
  socket: WebSocket;
}

export type RealtimeFault = { kind: 'status'; status: number; times: number };

export interface MockOpenAIRealtime {
  url: string;
  /** `http://127.0.0.1:<port>/v1`: an OpenAI channel's base URL. */
  baseUrl: string;
  connections: RealtimeConnection[];
  /** The `response.done` usage objects sent, in order. */
  usages: RealtimeUsage[];
  setFault(fault: RealtimeFault | null): void;
  setOptions(options: MockRealtimeOptions): void;
  close(): Promise<void>;
}

export interface RealtimeUsage {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  input_token_details: { text_tokens: number; audio_tokens: number; image_tokens: number; cached_tokens: number; cached_tokens_details: { text_tokens: number; audio_tokens: number; image_tokens: number } };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

/** PCM16 bytes per audio token (24 kHz mono, 1/30 s a token). */
export const PCM16_BYTES_PER_TOKEN = 800;

let counter = 0;
const id = (prefix: string): string => `${prefix}_${(++counter).toString(36).padStart(8, '0')}`;

export async function startMockOpenAIRealtime(initial: MockRealtimeOptions = {}): Promise<MockOpenAIRealtime> {
  let options: Required<MockRealtimeOptions> = { apiKey: 'sk-upstream-test', outputTextTokens: 20, outputAudioTokens: 150, deltas: 3, deltaBytes: 4800, deltaDelayMs: 0, ...initial };
  let fault: RealtimeFault | null = null;
  const connections: RealtimeConnection[] = [];
  const usages: RealtimeUsage[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_request, response) => {
    response.writeHead(426, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Upgrade required', type: 'invalid_request_error', code: null, param: null } }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : false) });

  const refuse = (socket: Duplex, status: number, message: string): void => {
    const body = JSON.stringify({ error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', code: status === 401 ? 'invalid_api_key' : null, param: null } });
    socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  };

  server.on('upgrade', (request: IncomingMessage, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/v1/realtime' && url.pathname !== '/openai/v1/realtime' && url.pathname !== '/openai/realtime') {
      refuse(socket, 404, `No route ${url.pathname}`);
      return;
    }
    if (fault !== null && fault.times > 0) {
      fault.times -= 1;
      refuse(socket, fault.status, 'The server had an error while processing your request.');
      return;
    }
    // Azure's endpoints (`/openai/...`) take the key in `api-key`; OpenAI's takes a Bearer token.
    const azure = url.pathname.startsWith('/openai/');
    const presented = azure ? request.headers['api-key'] : request.headers.authorization?.replace(/^Bearer\s+/i, '');
    if (presented !== options.apiKey) {
      refuse(socket, 401, azure ? 'Access denied due to invalid subscription key or wrong API endpoint.' : 'Incorrect API key provided.');
      return;
    }
    // Azure's deployment form names the deployment and an API version that serves realtime (2024-10-01 or later).
    if (url.pathname === '/openai/realtime' && !/^20(2[5-9]|24-1[0-2])-\d\d-\d\d(-preview)?$/.test(url.searchParams.get('api-version') ?? '')) {
      refuse(socket, 400, 'Missing or unsupported api-version for realtime.');
      return;
    }
    const model = url.pathname === '/openai/realtime' ? url.searchParams.get('deployment') : url.searchParams.get('model');
    if (model === null) {
      refuse(socket, 400, 'Missing model');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, request, model));
  });

  function serve(ws: WebSocket, request: IncomingMessage, model: string): void {
    const connection: RealtimeConnection = { url: request.url ?? '', headers: request.headers, received: [], events: [], socket: ws };
    connections.push(connection);
    const sessionId = id('sess');
    const send = (event: Record<string, unknown>): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ event_id: id('event'), ...event }));
    };
    const session = { type: 'realtime', object: 'realtime.session', id: sessionId, model, output_modalities: ['audio'], instructions: '', tools: [], tool_choice: 'auto', max_output_tokens: 'inf', audio: { input: { format: { type: 'audio/pcm', rate: 24000 } }, output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy' } } };
    send({ type: 'session.created', session });
    let textChars = 0;
    let audioBytes = 0;
    let bufferBytes = 0;
    let previousInput = 0;
    let active: { id: string; cancelled: boolean } | null = null;
    /** A declared function the last user text named, called by the next response. */
    let pendingCall: string | null = null;

    const usageNow = (fraction: number, output?: { text: number; audio: number }): RealtimeUsage => {
      const textTokens = Math.ceil(textChars / 4);
      const audioTokens = Math.floor(audioBytes / PCM16_BYTES_PER_TOKEN);
      const input = textTokens + audioTokens;
      const cached = Math.min(previousInput, input);
      const cachedAudio = Math.min(cached, audioTokens);
      const textOnly = !(session.output_modalities as string[]).includes('audio');
      const outText = output?.text ?? Math.round(options.outputTextTokens * fraction);
      const outAudio = output?.audio ?? (textOnly ? 0 : Math.round(options.outputAudioTokens * fraction));
      return {
        total_tokens: input + outText + outAudio,
        input_tokens: input,
        output_tokens: outText + outAudio,
        input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens, image_tokens: 0, cached_tokens: cached, cached_tokens_details: { text_tokens: cached - cachedAudio, audio_tokens: cachedAudio, image_tokens: 0 } },
        output_token_details: { text_tokens: outText, audio_tokens: outAudio },
      };
    };

    const callFunction = (name: string): void => {
      const responseId = id('resp');
      const base = { id: responseId, object: 'realtime.response', conversation_id: id('conv'), output_modalities: session.output_modalities, max_output_tokens: 'inf' };
      send({ type: 'response.created', response: { ...base, status: 'in_progress', status_details: null, output: [], usage: null } });
      const itemId = id('item');
      const callId = id('call');
      const args = JSON.stringify({ city: 'Paris' });
      const item = { id: itemId, object: 'realtime.item', type: 'function_call', status: 'in_progress', name, call_id: callId, arguments: '' };
      send({ type: 'response.output_item.added', response_id: responseId, output_index: 0, item });
      send({ type: 'response.function_call_arguments.delta', response_id: responseId, item_id: itemId, output_index: 0, call_id: callId, delta: args });
      send({ type: 'response.function_call_arguments.done', response_id: responseId, item_id: itemId, output_index: 0, call_id: callId, name, arguments: args });
      const done = { ...item, status: 'completed', arguments: args };
      send({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item: done });
      const usage = usageNow(1, { text: 8, audio: 0 });
      usages.push(usage);
      send({ type: 'response.done', response: { ...base, status: 'completed', status_details: null, output: [done], usage } });
      previousInput = usage.input_tokens;
      textChars += args.length;
    };

    const respond = async (): Promise<void> => {
      if (pendingCall !== null) {
        const name = pendingCall;
        pendingCall = null;
        callFunction(name);
        return;
      }
      const response = { id: id('resp'), cancelled: false };
      active = response;
      const textOnly = !(session.output_modalities as string[]).includes('audio');
      const base = { id: response.id, object: 'realtime.response', conversation_id: id('conv'), output_modalities: session.output_modalities, max_output_tokens: 'inf', audio: { output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy' } } };
      send({ type: 'response.created', response: { ...base, status: 'in_progress', status_details: null, output: [], usage: null } });
      const itemId = id('item');
      const item = { id: itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
      send({ type: 'response.output_item.added', response_id: response.id, output_index: 0, item });
      send({ type: 'response.content_part.added', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0, part: textOnly ? { type: 'text', text: '' } : { type: 'audio', transcript: '' } });
      let sent = 0;
      for (; sent < options.deltas && !response.cancelled; sent += 1) {
        if (textOnly) {
          send({ type: 'response.output_text.delta', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0, delta: `word${sent} ` });
        } else {
          send({ type: 'response.output_audio.delta', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0, delta: Buffer.alloc(options.deltaBytes, sent % 251).toString('base64') });
          send({ type: 'response.output_audio_transcript.delta', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0, delta: `word${sent} ` });
        }
        if (options.deltaDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.deltaDelayMs));
      }
      const status = response.cancelled ? 'cancelled' : 'completed';
      const usage = usageNow(options.deltas === 0 ? 1 : sent / options.deltas);
      usages.push(usage);
      send({ type: 'response.done', response: { ...base, status, status_details: status === 'cancelled' ? { type: 'cancelled', reason: 'client_cancelled' } : null, output: [{ ...item, status: 'completed' }], usage } });
      previousInput = usage.input_tokens;
      // The answer joins the conversation: its transcript as text the next response reads.
      textChars += sent * 6;
      active = null;
    };

    ws.on('message', (data, binary) => {
      if (binary) {
        send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_event', message: 'Binary frames are not supported.', param: null, event_id: null } });
        return;
      }
      let event: { type?: string; event_id?: string; item?: { type?: string; role?: string; output?: string; content?: Array<{ text?: string }> }; audio?: string; session?: Record<string, unknown> };
      try {
        event = JSON.parse(data.toString()) as typeof event;
      } catch {
        send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'The event is not JSON.', param: null, event_id: null } });
        return;
      }
      connection.received.push(String(event.type));
      connection.events.push(event as Record<string, unknown>);
      switch (event.type) {
        case 'session.update':
          Object.assign(session, event.session ?? {});
          send({ type: 'session.updated', session });
          break;
        case 'conversation.item.create': {
          let said = '';
          for (const part of event.item?.content ?? []) said += part.text ?? '';
          textChars += said.length + (event.item?.output ?? '').length;
          if (event.item?.type === 'function_call_output') pendingCall = null;
          else if (event.item?.role === 'user') pendingCall = (session.tools as Array<{ name?: string }>).map((tool) => tool.name ?? '').find((name) => name !== '' && said.includes(name)) ?? null;
          send({ type: 'conversation.item.created', previous_item_id: null, item: { id: id('item'), object: 'realtime.item', ...event.item, status: 'completed' } });
          break;
        }
        case 'input_audio_buffer.append':
          bufferBytes += Buffer.from(event.audio ?? '', 'base64').length;
          break;
        case 'input_audio_buffer.commit': {
          audioBytes += bufferBytes;
          const itemId = id('item');
          send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: itemId });
          const input = (session.audio as { input?: { transcription?: unknown } }).input;
          if (input?.transcription !== undefined && input.transcription !== null) {
            send({ type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript: `heard ${bufferBytes} bytes`, usage: { type: 'duration', seconds: bufferBytes / 48_000 } });
          }
          bufferBytes = 0;
          break;
        }
        case 'input_audio_buffer.clear':
          bufferBytes = 0;
          send({ type: 'input_audio_buffer.cleared' });
          break;
        case 'response.create':
          if (active !== null) {
            send({ type: 'error', error: { type: 'invalid_request_error', code: 'conversation_already_has_active_response', message: 'Conversation already has an active response in progress.', param: null, event_id: event.event_id ?? null } });
            break;
          }
          void respond();
          break;
        case 'response.cancel':
          if (active !== null) active.cancelled = true;
          break;
        default:
          send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_value', message: `Invalid value: '${String(event.type)}'.`, param: 'type', event_id: event.event_id ?? null } });
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    connections,
    usages,
    setFault: (next) => {
      fault = next;
    },
    setOptions: (next) => {
      options = { ...options, ...next };
    },
    close: async () => {
      for (const connection of connections) connection.socket.terminate();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
