/**
 * An external guardrail called over HTTP, in Portkey's webhook shape: a POST of
 * `{ request: { json, text, isStreamingRequest }, response: { json, text, statusCode }, provider, requestType,
 * eventType: 'beforeRequestHook' | 'afterRequestHook', metadata }` with the operator's headers, answered
 * `{ verdict: boolean }` (false: the text fails the guardrail). The same body carries LiteLLM's generic guardrail
 * fields (`texts`: the text parts one by one, `input_type`, `structured_messages`), and LiteLLM's answer
 * `{ action: 'BLOCKED' | 'NONE' | 'GUARDRAIL_INTERVENED', texts? }` is read too: BLOCKED fails the check, NONE passes,
 * GUARDRAIL_INTERVENED with `texts` (one string per text sent, in order) rewrites them. The guardrail has the
 * policy's deadline; an answer that does not come in time, is not 2xx, has no verdict, or rewrites a different number
 * of texts leaves the request to the policy's fail-open or fail-closed choice. The text sent is what the request
 * carries after the built-in policies ran (masked where they mask). Tool calls are shown too, in OpenAI's chat shape:
 * earlier turns' on the request's assistant messages, the model's on the answer's message, the direction's in
 * `tool_calls`, and their arguments, a line each, after the text in `request.text` and `response.text`.
 */
import type { Agent, request as undiciRequest } from 'undici';
import { loadOnce } from '../shared/load-once.js';
import { undiciModule } from '../shared/undici-module.js';
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../guardrails/guardrail-defaults.js';
import type { WebhookSettings } from '../guardrails/settings.js';
import { shownText, type ShownMessage, type ShownToolCall } from './chat-texts.js';

/** What a webhook guardrail is asked about: one direction's text. */
export interface WebhookSubject {
  direction: 'input' | 'output';
  /** the request as OpenAI chat messages: their text, tool results, and earlier turns' tool calls */
  messages: readonly ShownMessage[];
  /** the text parts one by one (the request's, or the answer's), which a rewriting answer replaces in order */
  texts: readonly string[];
  /** the answer's text and the tool calls the model made in it (output) */
  answer?: string;
  toolCalls?: readonly ShownToolCall[];
  model: string;
  stream: boolean;
  policy: string;
}

/**
 * The guardrail's verdict: passed, failed, rewritten (the texts to use instead, as many as were sent), or no verdict
 * (`reason` says why, for the log; never text).
 */
export type WebhookVerdict = { kind: 'passed' } | { kind: 'failed' } | { kind: 'rewritten'; texts: string[] } | { kind: 'unavailable'; reason: string };

/** Bytes of a guardrail's answer read at most: a verdict is small. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class WebhookGuardrailCaller {
  /** undici and the agent, made at the first webhook guardrail called (see undiciModule) */
  readonly #client = loadOnce(async (): Promise<{ agent: Agent; request: typeof undiciRequest }> => {
    const { Agent, request } = await undiciModule.get();
    return { agent: new Agent({ keepAliveTimeout: 4000, connections: 64 }), request };
  });

  async check(settings: WebhookSettings, subject: WebhookSubject): Promise<WebhookVerdict> {
    const timeoutMs = settings.timeout_ms ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    const requestCalls = subject.messages.flatMap((message) => message.tool_calls ?? []);
    const requestText = shownText(subject.messages.map((message) => message.content), requestCalls);
    const answerCalls = subject.toolCalls ?? [];
    const answerMessage = { role: 'assistant', content: subject.answer ?? '', ...(answerCalls.length === 0 ? {} : { tool_calls: answerCalls }) };
    const body = JSON.stringify({
      request: { json: { model: subject.model, messages: subject.messages, stream: subject.stream }, text: requestText, isStreamingRequest: subject.stream },
      response: subject.direction === 'output'
        ? { json: { object: 'chat.completion', model: subject.model, choices: [{ index: 0, message: answerMessage }] }, text: shownText([subject.answer ?? ''], answerCalls), statusCode: 200 }
        : { json: null, text: '', statusCode: null },
      provider: 'unigate',
      requestType: 'chatComplete',
      eventType: subject.direction === 'input' ? 'beforeRequestHook' : 'afterRequestHook',
      metadata: { guardrail: subject.policy },
      texts: subject.texts,
      input_type: subject.direction === 'input' ? 'request' : 'response',
      structured_messages: subject.messages,
      tool_calls: subject.direction === 'output' ? answerCalls : requestCalls,
    });
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const { agent, request } = this.#client.loaded() ?? await this.#client.get();
      const answer = await request(settings.url, {
        method: 'POST',
        headers: { ...settings.headers, 'content-type': 'application/json', accept: 'application/json' },
        body,
        dispatcher: agent,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await readLimited(answer.body);
      if (answer.statusCode < 200 || answer.statusCode >= 300) return { kind: 'unavailable', reason: `answered ${answer.statusCode}` };
      return verdictOf(text, subject.texts);
    } catch (error) {
      if (signal.aborted) return { kind: 'unavailable', reason: `no answer within ${timeoutMs} ms` };
      const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'unreachable';
      return { kind: 'unavailable', reason: code };
    }
  }

  /** Closes the agent's connections (none before the first call). */
  async close(): Promise<void> {
    await this.#client.loaded()?.agent.close();
  }
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function verdictOf(text: string | null, sent: readonly string[]): WebhookVerdict {
  if (text === null) return { kind: 'unavailable', reason: 'answer too large' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'unavailable', reason: 'answer is not JSON' };
  }
  if (parsed === null || typeof parsed !== 'object') return { kind: 'unavailable', reason: 'answer is not an object' };
  const { verdict, action, texts } = parsed as { verdict?: unknown; action?: unknown; texts?: unknown };
  if (typeof verdict === 'boolean') return { kind: verdict ? 'passed' : 'failed' };
  if (action === 'BLOCKED') return { kind: 'failed' };
  if (action === 'NONE') return { kind: 'passed' };
  if (action === 'GUARDRAIL_INTERVENED') {
    if (texts === undefined || texts === null) return { kind: 'passed' };
    if (!Array.isArray(texts) || texts.length !== sent.length || !texts.every((item) => typeof item === 'string')) {
      return { kind: 'unavailable', reason: `rewrote ${Array.isArray(texts) ? texts.length : 'no list of'} texts for ${sent.length} sent` };
    }
    const rewritten = texts as string[];
    return rewritten.every((item, index) => item === sent[index]) ? { kind: 'passed' } : { kind: 'rewritten', texts: rewritten };
  }
  return { kind: 'unavailable', reason: 'answer has no verdict' };
}
