import { runInProcess, type InProcessAnswer } from '../http/in-process-request.js';
import type { InProcessCaller, RequestContext, RouteHandler } from '../http/request-context.js';

/** Model calls one request may make while the gateway runs its tools; the last is asked to answer without tools. */
export const MAX_MODEL_ROUNDS = 8;
/** Tool calls run of one model turn; further calls of that turn are answered with an error, not run. */
export const MAX_CALLS_PER_ROUND = 16;

/** The caller's headers a round does not carry: its credentials (the round's caller is already checked) and the body's framing. */
const NOT_FORWARDED = new Set([
  'authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie', 'host', 'connection', 'content-length', 'content-type',
  'transfer-encoding', 'expect', 'accept-encoding', 'keep-alive', 'upgrade',
]);

export type RoundAnswer = { ok: true; json: Record<string, unknown> } | { ok: false; answer: InProcessAnswer };

/**
 * The error object of a round that failed, as the family wrote it (`error` of OpenAI's and Anthropic's error bodies:
 * a guardrail's refusal keeps its `guardrail_blocked` code and message), or null when the body carries none.
 */
export function roundError(answer: InProcessAnswer): Record<string, unknown> & { message: string } | null {
  try {
    const body = JSON.parse(answer.body.toString('utf8')) as { error?: unknown };
    const error = body?.error;
    if (error !== null && typeof error === 'object' && !Array.isArray(error) && typeof (error as { message?: unknown }).message === 'string') {
      return error as Record<string, unknown> & { message: string };
    }
  } catch {
    // No error object: the caller says the round failed.
  }
  return null;
}

/**
 * The model calls of one client request whose MCP tools the gateway runs: each round is a request of its own through
 * the family's chat route, in process (routing, translation, admission, and the one settlement with its usage row,
 * whose request id is the client's with `-r<round>`), so every round's tokens are charged once, by the same code as
 * any request's.
 */
export class ModelRounds {
  #count = 0;

  constructor(
    private readonly chat: RouteHandler,
    private readonly context: RequestContext,
    private readonly family: RequestContext['family'],
    private readonly caller: InProcessCaller,
    private readonly keepHeader: (name: string, value: string) => string | null = (_name, value) => value,
  ) {}

  get count(): number {
    return this.#count;
  }

  get isLast(): boolean {
    return this.#count + 1 >= MAX_MODEL_ROUNDS;
  }

  async run(body: Record<string, unknown>): Promise<RoundAnswer> {
    this.#count += 1;
    const answer = await runInProcess({
      handler: this.chat,
      family: this.family,
      path: this.context.path,
      requestId: `${this.context.requestId}-r${this.#count}`,
      caller: this.caller,
      body: JSON.stringify(body),
      headers: this.#headers(),
      clientIp: this.context.clientIp,
    });
    if (answer.status !== 200) return { ok: false, answer };
    try {
      const json = JSON.parse(answer.body.toString('utf8')) as unknown;
      if (json !== null && typeof json === 'object' && !Array.isArray(json)) return { ok: true, json: json as Record<string, unknown> };
    } catch {
      // Answered below as the fault it is.
    }
    return { ok: false, answer: { status: 502, headers: {}, body: answer.body } };
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.context.request.headers)) {
      if (typeof value !== 'string' || NOT_FORWARDED.has(name)) continue;
      const kept = this.keepHeader(name, value);
      if (kept !== null) headers[name] = kept;
    }
    return headers;
  }
}
