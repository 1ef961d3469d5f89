/**
 * A mock of Gemini's Live API (BidiGenerateContent over WebSocket) as Google serves it and the `@google/genai` SDK
 * speaks it: `/ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent` (the SDK's double
 * slash before `ws` too), the key as `?key=` or `x-goog-api-key`, every server message JSON in a binary frame. The
 * first client message must be `setup` (answered `setupComplete`); a wrong key or an unknown model is told after it
 * with a close code and the reason as text, as Google does. `clientContent` with `turnComplete`, `realtimeInput`
 * audio ended by `audioStreamEnd` (or `activityEnd`, as voice activity detection would), and `toolResponse` each start
 * a turn: `serverContent.modelTurn` chunks (PCM16 audio at 24 kHz in `inlineData`, or text), `generationComplete`,
 * then `turnComplete` with the turn's `usageMetadata`. A user text naming a declared function gets a `toolCall`
 * first (its own usage), answered by the caller's `toolResponse`. A setup with `outputAudioTranscription` gets each audio
 * chunk's transcript (`word<n> `) as `serverContent.outputTranscription`; one with `inputAudioTranscription` gets
 * `serverContent.inputTranscription` (`heard <bytes> bytes`) for an audio turn before its answer.
 *
 * Usage is a function of what the session received, so tests can compute every charge: the prompt is the whole
 * context so far, text as ceil(chars / 4) tokens, input audio one token per 1000 bytes of PCM16 at 16 kHz (32 tokens a
 * second), and earlier answers (their tokens as text); with `cache`, the previous turn's prompt is reported cached
 * (`cachedContentTokenCount`, `cacheTokensDetails` by modality). The answer is `outputAudioTokens` AUDIO (or
 * `outputTextTokens` TEXT when the setup asked for text) and `thoughtsTokenCount` thinking.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export interface MockGeminiLiveOptions {
  apiKey?: string;
  /** Upstream model ids served (without `models/`). */
  models?: string[];
  outputAudioTokens?: number;
  outputTextTokens?: number;
  thoughtsTokens?: number;
  /** Model turn chunks per turn, each `chunkBytes` of PCM16 (base64 on the wire). */
  chunks?: number;
  chunkBytes?: number;
  /** Pause between chunks (ms). */
  chunkDelayMs?: number;
  cache?: boolean;
}

export type GeminiLiveFault =
  | { kind: 'status'; status: number; times: number }
  /** Close after the setup arrives, instead of `setupComplete`. */
  | { kind: 'close'; code: number; reason: string; times: number };

export interface GeminiLiveConnection {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The setup message as received. */
  setup: Record<string, unknown> | null;
  /** Client message kinds received (`setup`, `clientContent`, `realtimeInput`, `toolResponse`). */
  received: string[];
  /** The client messages received, parsed, in order. */
  messages: Array<Record<string, unknown>>;
  socket: WebSocket;
}

export interface ModalityTokenCount {
  modality: 'TEXT' | 'AUDIO';
  tokenCount: number;
}

export interface GeminiLiveUsage {
  promptTokenCount: number;
  cachedContentTokenCount?: number;
  responseTokenCount: number;
  thoughtsTokenCount?: number;
  totalTokenCount: number;
  promptTokensDetails: ModalityTokenCount[];
  cacheTokensDetails?: ModalityTokenCount[];
  responseTokensDetails: ModalityTokenCount[];
}

export interface MockGeminiLive {
  /** `http://127.0.0.1:<port>`: a Gemini channel's base URL, and the SDK's `httpOptions.baseUrl`. */
  url: string;
  connections: GeminiLiveConnection[];
  usages: GeminiLiveUsage[];
  setFault(fault: GeminiLiveFault | null): void;
  setOptions(options: MockGeminiLiveOptions): void;
  close(): Promise<void>;
}

/** PCM16 bytes per input audio token (16 kHz mono, 32 tokens a second). */
export const INPUT_PCM16_BYTES_PER_TOKEN = 1000;

const LIVE_PATH = /^\/+ws\/google\.ai\.generativelanguage\.(v1alpha|v1beta|v1)\.GenerativeService\.BidiGenerateContent$/;

let counter = 0;
const nextId = (prefix: string): string => `${prefix}-${(++counter).toString(36)}`;

export async function startMockGeminiLive(initial: MockGeminiLiveOptions = {}): Promise<MockGeminiLive> {
  let options: Required<MockGeminiLiveOptions> = {
    apiKey: 'g-upstream-key',
    models: ['gemini-live-2.5-flash-preview'],
    outputAudioTokens: 150,
    outputTextTokens: 24,
    thoughtsTokens: 0,
    chunks: 3,
    chunkBytes: 4800,
    chunkDelayMs: 0,
    cache: true,
    ...initial,
  };
  let fault: GeminiLiveFault | null = null;
  const connections: GeminiLiveConnection[] = [];
  const usages: GeminiLiveUsage[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_request, response) => {
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 404, message: 'Not Found', status: 'NOT_FOUND' } }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const wss = new WebSocketServer({ noServer: true });

  const refuse = (socket: Duplex, status: number): void => {
    const body = JSON.stringify({ error: { code: status, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } });
    socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  };

  server.on('upgrade', (request: IncomingMessage, socket, head) => {
    // Not `new URL(path, base)`: the SDK's path starts with two slashes, which would read as a host.
    const url = new URL(`http://127.0.0.1${request.url ?? '/'}`);
    if (!LIVE_PATH.test(url.pathname)) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    if (fault?.kind === 'status' && fault.times > 0) {
      fault.times -= 1;
      refuse(socket, fault.status);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, request, url));
  });

  function serve(ws: WebSocket, request: IncomingMessage, url: URL): void {
    const connection: GeminiLiveConnection = { url: request.url ?? '', headers: request.headers, setup: null, received: [], messages: [], socket: ws };
    connections.push(connection);
    const key = url.searchParams.get('key') ?? request.headers['x-goog-api-key'];
    const send = (message: Record<string, unknown>): void => {
      // Google sends every server message as JSON in a binary frame.
      if (ws.readyState === ws.OPEN) ws.send(Buffer.from(JSON.stringify(message)), { binary: true });
    };
    let textChars = 0;
    let audioBytes = 0;
    let pendingAudio = 0;
    let answerTokens = 0;
    let previousPrompt: { text: number; audio: number } | null = null;
    let active = false;
    let textOutput = false;
    let functions: string[] = [];
    let transcribeOutput = false;
    let transcribeInput = false;

    const usageNow = (output: { audio: number; text: number }): GeminiLiveUsage => {
      const text = Math.ceil(textChars / 4) + answerTokens;
      const audio = Math.floor(audioBytes / INPUT_PCM16_BYTES_PER_TOKEN);
      const prompt = text + audio;
      const response = output.audio + output.text;
      const usage: GeminiLiveUsage = {
        promptTokenCount: prompt,
        responseTokenCount: response,
        totalTokenCount: prompt + response + options.thoughtsTokens,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: text }, ...(audio > 0 ? [{ modality: 'AUDIO' as const, tokenCount: audio }] : [])],
        responseTokensDetails: [...(output.text > 0 ? [{ modality: 'TEXT' as const, tokenCount: output.text }] : []), ...(output.audio > 0 ? [{ modality: 'AUDIO' as const, tokenCount: output.audio }] : [])],
      };
      if (options.thoughtsTokens > 0) usage.thoughtsTokenCount = options.thoughtsTokens;
      if (options.cache && previousPrompt !== null) {
        const cachedText = Math.min(previousPrompt.text, text);
        const cachedAudio = Math.min(previousPrompt.audio, audio);
        usage.cachedContentTokenCount = cachedText + cachedAudio;
        usage.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: cachedText }, ...(cachedAudio > 0 ? [{ modality: 'AUDIO' as const, tokenCount: cachedAudio }] : [])];
      }
      previousPrompt = { text, audio };
      usages.push(usage);
      return usage;
    };

    const respond = async (): Promise<void> => {
      active = true;
      for (let chunk = 0; chunk < options.chunks; chunk += 1) {
        const part = textOutput ? { text: `word${chunk} ` } : { inlineData: { mimeType: 'audio/pcm;rate=24000', data: Buffer.alloc(options.chunkBytes, chunk % 251).toString('base64') } };
        send({ serverContent: { modelTurn: { parts: [part] } } });
        if (transcribeOutput && !textOutput) send({ serverContent: { outputTranscription: { text: `word${chunk} ` } } });
        if (options.chunkDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.chunkDelayMs));
      }
      send({ serverContent: { generationComplete: true } });
      const output = textOutput ? { audio: 0, text: options.outputTextTokens } : { audio: options.outputAudioTokens, text: 0 };
      send({ serverContent: { turnComplete: true }, usageMetadata: usageNow(output) });
      // The answer joins the context the next turn reads.
      answerTokens += output.audio + output.text;
      active = false;
    };

    const callTool = (name: string): void => {
      active = true;
      send({ toolCall: { functionCalls: [{ id: nextId('call'), name, args: { city: 'Paris' } }] } });
      send({ usageMetadata: usageNow({ audio: 0, text: 8 }) });
      answerTokens += 8;
      active = false;
    };

    ws.on('message', (data) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(data.toString()) as Record<string, unknown>;
      } catch {
        ws.close(1007, 'Invalid JSON payload received.');
        return;
      }
      const kind = Object.keys(message)[0] ?? '';
      connection.received.push(kind);
      connection.messages.push(message);
      if (connection.setup === null) {
        const setup = message.setup as { model?: unknown; generationConfig?: { responseModalities?: unknown }; tools?: Array<{ functionDeclarations?: Array<{ name?: string }> }> } | undefined;
        if (setup === undefined) {
          ws.close(1007, 'Request contains an invalid argument.');
          return;
        }
        connection.setup = setup as Record<string, unknown>;
        if (fault?.kind === 'close' && fault.times > 0) {
          fault.times -= 1;
          ws.close(fault.code, fault.reason);
          return;
        }
        if (key !== options.apiKey) {
          ws.close(1007, 'API key not valid. Please pass a valid API key.');
          return;
        }
        const model = typeof setup.model === 'string' ? setup.model : '';
        if (!model.startsWith('models/') || !options.models.includes(model.slice('models/'.length))) {
          ws.close(1008, `${model} is not found for API version v1beta, or is not supported for bidiGenerateContent.`);
          return;
        }
        const modalities = setup.generationConfig?.responseModalities;
        textOutput = Array.isArray(modalities) && modalities.includes('TEXT');
        transcribeOutput = (setup as Record<string, unknown>).outputAudioTranscription !== undefined;
        transcribeInput = (setup as Record<string, unknown>).inputAudioTranscription !== undefined;
        functions = (setup.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name ?? ''));
        send({ setupComplete: {} });
        return;
      }
      switch (kind) {
        case 'clientContent': {
          const content = message.clientContent as { turns?: Array<{ parts?: Array<{ text?: string }> }>; turnComplete?: boolean };
          let said = '';
          for (const turn of content.turns ?? []) for (const part of turn.parts ?? []) said += part.text ?? '';
          textChars += said.length;
          if (content.turnComplete !== true || active) break;
          const named = functions.find((name) => name !== '' && said.includes(name));
          if (named !== undefined) callTool(named);
          else void respond();
          break;
        }
        case 'realtimeInput': {
          const input = message.realtimeInput as { audio?: { data?: string }; mediaChunks?: Array<{ data?: string }>; text?: string; audioStreamEnd?: boolean; activityEnd?: unknown };
          for (const blob of [input.audio, ...(input.mediaChunks ?? [])]) pendingAudio += Buffer.from(blob?.data ?? '', 'base64').length;
          textChars += (input.text ?? '').length;
          if ((input.audioStreamEnd === true || input.activityEnd !== undefined) && !active) {
            audioBytes += pendingAudio;
            if (transcribeInput) send({ serverContent: { inputTranscription: { text: `heard ${pendingAudio} bytes` } } });
            pendingAudio = 0;
            void respond();
          }
          break;
        }
        case 'toolResponse':
          textChars += JSON.stringify(message.toolResponse).length;
          if (!active) void respond();
          break;
        default:
          ws.close(1007, `Invalid JSON payload received. Unknown name "${kind}": Cannot find field.`);
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
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
