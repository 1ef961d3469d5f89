import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { addressCheckedLookup, addressRefusal, endpointUrlRefusal } from '../webhooks/endpoint-address.js';

/** Which addresses a provider may have: the operators' own is trusted; an account's reaches public addresses only. */
export interface ProviderAddressPolicy {
  allowHttpLoopback: boolean;
  allowPrivateAddresses: boolean;
}

/** Why talking to the identity provider failed; the message names the provider's URL, never a secret. */
export class ProviderError extends Error {
  override name = 'ProviderError';
}

const TIMEOUT_MS = 10_000;
/** Discovery documents, key sets and token answers are small. */
const MAX_ANSWER_BYTES = 256 * 1024;

export interface ProviderAnswer {
  status: number;
  json: unknown;
}

/**
 * HTTP to identity providers: a deadline, no redirects, a bounded body, and every address checked as the connection
 * resolves it (a provider's host name that resolves to a private address is refused unless the policy allows those).
 */
export class ProviderHttp {
  readonly #agent: Agent;

  constructor(private readonly policy: ProviderAddressPolicy) {
    const checkedLookup = addressCheckedLookup(policy, (reason) => new ProviderError(reason));
    this.#agent = new Agent({ connect: { lookup: checkedLookup as never, timeout: TIMEOUT_MS }, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, keepAliveTimeout: 2000 });
  }

  /** Why this provider URL may not be used, or null. */
  refusal(url: string): string | null {
    const refusal = endpointUrlRefusal(url, this.policy);
    if (refusal !== null) return refusal;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return isIP(host) !== 0 ? addressRefusal(host, this.policy) : null;
  }

  async call(url: string, init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }): Promise<ProviderAnswer> {
    const refusal = this.refusal(url);
    if (refusal !== null) throw new ProviderError(`${url}: ${refusal}`);
    let answer;
    try {
      answer = await request(url, {
        method: init.method,
        headers: { accept: 'application/json', ...init.headers },
        ...(init.body === undefined ? {} : { body: init.body }),
        dispatcher: this.#agent,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new ProviderError(`${url} could not be reached: ${error instanceof Error ? error.message : String(error)}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        answer.body.destroy();
        throw new ProviderError(`${url} answered more than ${MAX_ANSWER_BYTES} bytes.`);
      }
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown = null;
    try {
      json = text === '' ? null : JSON.parse(text);
    } catch {
      throw new ProviderError(`${url} answered ${answer.statusCode} with a body that is not JSON.`);
    }
    return { status: answer.statusCode, json };
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
