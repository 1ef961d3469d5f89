import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { UpstreamConnectionError } from '../upstreams/http-transport.js';
import type { UpstreamAdapter, UpstreamErrorClass, UpstreamRequest, UpstreamResponse, UpstreamTimeouts } from '../upstreams/upstream-adapter.js';
import { isRetryableUpstreamStatus, isUpstreamCredentialFailure } from './upstream-error.js';

const MAX_ERROR_BODY_BYTES = 64 * 1024;

export function timeoutsOf(route: ChannelRoute, stream: boolean): UpstreamTimeouts {
  const settings = route.channel.settings;
  const read = (name: string, fallback: number): number => (typeof settings[name] === 'number' ? (settings[name] as number) : fallback);
  return { firstByteMs: read('first_byte_timeout_ms', stream ? 120_000 : 600_000), idleMs: read('idle_timeout_ms', 120_000) };
}

/** What one upstream call came to, before anything reached the caller. */
export type UpstreamOutcome =
  | { kind: 'response'; response: UpstreamResponse }
  /** Worth another channel: the failure to report if none succeeds. */
  | { kind: 'retry'; failure: GatewayError; credentialRejected: boolean }
  /** The upstream refused the request itself (4xx): the caller's problem, relayed. */
  | { kind: 'refused'; status: number; body: Buffer }
  | { kind: 'aborted' };

export function connectionFailure(error: unknown): GatewayError {
  if (error instanceof UpstreamConnectionError && error.kind === 'timeout') {
    return new GatewayError('upstream_timeout', 'The upstream provider did not answer in time; all channels for this model were tried.');
  }
  return new GatewayError('upstream_error', 'The upstream provider could not be reached; all channels for this model were tried.');
}

/** Reads (a bounded part of) an upstream error body. */
async function readErrorBody(response: UpstreamResponse, signal: AbortSignal): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      if (size < MAX_ERROR_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    if (signal.aborted) return null;
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES);
}

function classifyByStatus(status: number): UpstreamErrorClass {
  if (isUpstreamCredentialFailure(status)) return 'credential';
  return isRetryableUpstreamStatus(status) ? 'retryable' : 'caller';
}

/** Sends one request and sorts the answer into success, retry, refusal or caller abort. */
export async function callUpstream(
  adapter: UpstreamAdapter,
  route: ChannelRoute,
  request: UpstreamRequest,
  options: { signal: AbortSignal; stream: boolean },
): Promise<UpstreamOutcome> {
  let response: UpstreamResponse;
  try {
    response = await adapter.transport(route.channel).send(request, { signal: options.signal, timeouts: timeoutsOf(route, options.stream) });
  } catch (error) {
    if (options.signal.aborted) return { kind: 'aborted' };
    return { kind: 'retry', failure: connectionFailure(error), credentialRejected: false };
  }
  if (response.status < 400) return { kind: 'response', response };
  const body = await readErrorBody(response, options.signal);
  if (body === null) return { kind: 'aborted' };
  const errorClass = adapter.classifyError?.(response.status, body) ?? classifyByStatus(response.status);
  const credentialRejected = errorClass === 'credential';
  if (errorClass !== 'caller') {
    const throttled = response.status === 429;
    return {
      kind: 'retry',
      credentialRejected,
      failure: new GatewayError('upstream_error', 'The upstream provider failed to answer; all channels for this model were tried.', {
        status: throttled ? 503 : 502,
        ...(throttled ? { retryAfterSeconds: 1 } : {}),
      }),
    };
  }
  return { kind: 'refused', status: response.status, body };
}
