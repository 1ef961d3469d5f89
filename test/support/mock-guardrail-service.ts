/**
 * An external guardrail service over real HTTP on 127.0.0.1, answering as Portkey's webhook guardrails do
 * (`{ verdict }`) at `/portkey` and as LiteLLM's generic guardrail API does (`{ action }`) at `/litellm`, recording
 * every call. What it decides, from the text it is shown (the request's on `beforeRequestHook`, the answer's on
 * `afterRequestHook`): `forbidden` fails the check; `slowpoke` answers after five seconds; `broken` answers 500. At
 * `/litellm`, `codename <word>` is rewritten (`GUARDRAIL_INTERVENED` with `texts`, the word replaced by
 * `[REDACTED]` in each text sent), and `miscount` is answered with one text fewer than were sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GuardrailCall {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: {
    request: { json: { model: string; messages: Array<{ role: string; content: string }>; stream: boolean }; text: string; isStreamingRequest: boolean };
    response: { json: unknown; text: string; statusCode: number | null };
    provider: string;
    requestType: string;
    eventType: 'beforeRequestHook' | 'afterRequestHook';
    metadata: Record<string, unknown>;
    texts: string[];
    input_type: 'request' | 'response';
    structured_messages: Array<{ role: string; content: string }>;
  };
}

export interface MockGuardrailService {
  url: string;
  calls: GuardrailCall[];
  close(): Promise<void>;
}

export const SLOW_ANSWER_MS = 5000;

export async function startMockGuardrailService(): Promise<MockGuardrailService> {
  const calls: GuardrailCall[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GuardrailCall['body'];
      const path = request.url ?? '/';
      calls.push({ path, headers: request.headers, body });
      const text = body.eventType === 'beforeRequestHook' ? body.request.text : body.response.text;
      const answer = (): void => {
        if (/broken/.test(text)) {
          response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
          return;
        }
        const fails = /forbidden/.test(text);
        const verdict = path !== '/litellm' ? { verdict: !fails }
          : fails ? { action: 'BLOCKED', blocked_reason: 'forbidden word' }
          : /miscount/.test(text) ? { action: 'GUARDRAIL_INTERVENED', texts: body.texts.slice(1) }
          : /codename \w/.test(text) ? { action: 'GUARDRAIL_INTERVENED', texts: body.texts.map((sent) => sent.replace(/codename \w+/g, 'codename [REDACTED]')) }
          : { action: 'NONE', blocked_reason: null };
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(verdict));
      };
      if (/slowpoke/.test(text)) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!response.destroyed) answer();
        }, SLOW_ANSWER_MS);
        timers.add(timer);
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
