/**
 * The mock OpenAI upstream's Responses API WebSocket mode (`wss://…/v1/responses`), as OpenAI documents it and the
 * `openai` SDK's `ResponsesWS` speaks it: Bearer key at the handshake (401 otherwise); each `response.create` event
 * (the body of `POST /v1/responses` without `stream`) is answered with the same event sequence the mock streams over
 * HTTP, one JSON text frame per event, tagged with the event's `stream_id` when it names one; a refused request is an
 * `error` event with its HTTP status; `background` is refused, as OpenAI does over WebSocket.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { MockHttpError } from './mock-openai-upstream-wire.js';
import type { ResponsesAnswer } from './mock-openai-upstream-responses-api.js';

export function serveResponsesWebSocket(server: Server, options: { apiKey: string; answer: (body: Record<string, unknown>) => ResponsesAnswer }): void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?')[0];
    const presented = request.headers.authorization?.replace(/^Bearer\s+/i, '');
    if (path !== '/v1/responses' || presented !== options.apiKey) {
      const status = path !== '/v1/responses' ? 404 : 401;
      const body = JSON.stringify({ error: { message: status === 404 ? `No route ${path}` : 'Incorrect API key provided.', type: 'invalid_request_error', code: status === 404 ? null : 'invalid_api_key', param: null } });
      socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws));
  });

  function serve(ws: WebSocket): void {
    const send = (event: Record<string, unknown>, streamId: unknown): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(typeof streamId === 'string' ? { ...event, stream_id: streamId } : event));
    };
    const fail = (status: number, error: Record<string, unknown>, streamId: unknown): void => send({ type: 'error', status, error }, streamId);
    ws.on('message', (data, binary) => {
      let event: Record<string, unknown>;
      try {
        event = binary ? {} : (JSON.parse(data.toString()) as Record<string, unknown>);
      } catch {
        event = {};
      }
      const { type, stream_id: streamId, stream: _stream, ...body } = event;
      if (type !== 'response.create') {
        fail(400, { type: 'invalid_request_error', code: 'invalid_event', message: `Invalid event type '${String(type)}'.`, param: 'type' }, streamId);
        return;
      }
      if (body.background === true) {
        fail(400, { type: 'invalid_request_error', code: 'unsupported_parameter', message: 'background is not supported over WebSocket.', param: 'background' }, streamId);
        return;
      }
      try {
        const answer = options.answer({ ...body, stream: true });
        if (answer.kind === 'stream') for (const item of answer.events) send(item, streamId);
      } catch (error) {
        if (error instanceof MockHttpError) fail(error.status, error.body.error as unknown as Record<string, unknown>, streamId);
        else fail(500, { type: 'server_error', code: null, message: 'The server had an error.', param: null }, streamId);
      }
    });
  }
}
