import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Agent, request as undiciRequest } from 'undici';
import { loadOnce, type LoadOnce } from '../shared/load-once.js';
import { undiciModule } from '../shared/undici-module.js';
import type { WebhookConfig } from '../config/webhook-config.js';
import { addressRefusal } from './endpoint-address.js';

/** What one attempt came to. */
export interface SentAttempt {
  statusCode: number | null;
  latencyMs: number;
  /** Why it failed without an answer, or what the answer was when it was not 2xx. */
  error: string | null;
  /** The start of the answer's body, at most RESPONSE_EXCERPT_CHARS characters. */
  responseExcerpt: string | null;
}

export interface OutgoingWebhook {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Bytes read of an answer's body; the rest is never read. */
const RESPONSE_READ_BYTES = 2048;
export const RESPONSE_EXCERPT_CHARS = 500;

class RefusedDestination extends Error {
  override name = 'RefusedDestination';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Sends webhooks: POST with a deadline, redirects never followed, the answer's body read only up to a small excerpt.
 * The destination's addresses are checked as the connection resolves them (so a name that resolves to a private
 * address is refused, and so is one that changes its answer between a check and the connection).
 */
export class WebhookSender {
  /** undici and the agent, made at the first webhook sent (see undiciModule) */
  readonly #client: LoadOnce<{ agent: Agent; request: typeof undiciRequest }>;

  constructor(private readonly config: Pick<WebhookConfig, 'timeoutMs' | 'allowHttpLoopback' | 'allowPrivateAddresses'>) {
    const checkedLookup = (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error !== null) return callback(error, []);
        for (const entry of addresses) {
          const refusal = addressRefusal(entry.address, config);
          if (refusal !== null) return callback(new RefusedDestination(refusal), []);
        }
        if (options.all === true) return callback(null, addresses);
        const first = addresses[0];
        if (first === undefined) return callback(new RefusedDestination('The host name has no address.'), []);
        return callback(null, first.address, first.family);
      });
    };
    this.#client = loadOnce(async () => {
      const { Agent, request } = await undiciModule.get();
      const agent = new Agent({
        connect: { lookup: checkedLookup as never, timeout: config.timeoutMs },
        headersTimeout: config.timeoutMs,
        bodyTimeout: config.timeoutMs,
        keepAliveTimeout: 4000,
      });
      return { agent, request };
    });
  }

  async send(webhook: OutgoingWebhook): Promise<SentAttempt> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const host = new URL(webhook.url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) {
      const refusal = addressRefusal(host, this.config);
      if (refusal !== null) return { statusCode: null, latencyMs: 0, error: refusal, responseExcerpt: null };
    }
    try {
      const { agent, request } = this.#client.loaded() ?? await this.#client.get();
      const answer = await request(webhook.url, {
        method: 'POST',
        headers: webhook.headers,
        body: webhook.body,
        dispatcher: agent,
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
      const excerpt = await readExcerpt(answer.body);
      const ok = answer.statusCode >= 200 && answer.statusCode < 300;
      const redirect = answer.statusCode >= 300 && answer.statusCode < 400;
      return {
        statusCode: answer.statusCode,
        latencyMs: elapsed(),
        error: ok ? null : redirect ? `answered ${answer.statusCode}; redirects are not followed` : `answered ${answer.statusCode}`,
        responseExcerpt: excerpt,
      };
    } catch (error) {
      return { statusCode: null, latencyMs: elapsed(), error: describeFailure(error, this.config.timeoutMs), responseExcerpt: null };
    }
  }

  /** Closes the agent's connections (none before the first webhook). */
  async close(): Promise<void> {
    await this.#client.loaded()?.agent.close();
  }
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_READ_BYTES) break;
  }
  body.destroy();
  if (size === 0) return null;
  // Control characters are left out: the excerpt is shown in the console and the log.
  const text = Buffer.concat(chunks).subarray(0, RESPONSE_READ_BYTES).toString('utf8').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  return text.slice(0, RESPONSE_EXCERPT_CHARS);
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof RefusedDestination) return error.message;
  const cause = error instanceof Error && error.cause instanceof RefusedDestination ? error.cause : null;
  if (cause !== null) return cause.message;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError' || /timeout/i.test(error.name))) {
    return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  }
  const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : null;
  return code === null ? 'the connection failed' : `the connection failed (${code})`;
}
