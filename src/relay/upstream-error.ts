import { GatewayError } from '../errors/gateway-error.js';

/** Key-like tokens: `sk-…`, `<brand>_sk_live_…`, `gsk_…`, `rk_`/`pk_` forms, Google `AIza…` keys and Bearer credentials. */
const SECRET_PATTERN = /(?<![A-Za-z0-9])(?:[A-Za-z0-9]+_)?g?(?:sk|rk|pk)[-_][A-Za-z0-9_*\-.]{6,}|\bAIza[0-9A-Za-z_-]{20,}|\bBearer\s+\S+/g;
const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>]+/g;

/** Upstream text may carry a (partial) upstream key or its URL; neither reaches the caller. */
export function scrubUpstreamText(text: string): string {
  return text.replace(SECRET_PATTERN, '[redacted]').replace(URL_PATTERN, '[upstream]').slice(0, 1000);
}

/** The caller-facing error for an upstream's non-retryable 4xx answer (its own message, scrubbed). */
export function callerErrorFromUpstream(status: number, rawBody: Buffer): GatewayError {
  let message = `The upstream provider rejected the request (HTTP ${status}).`;
  let param: string | undefined;
  try {
    const parsed = JSON.parse(rawBody.toString('utf8')) as { error?: { message?: unknown; param?: unknown } | string; message?: unknown };
    const error = parsed.error;
    const text = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : typeof parsed.message === 'string' ? parsed.message : null;
    if (text !== null && text !== '') message = `Upstream: ${scrubUpstreamText(text)}`;
    if (typeof error === 'object' && typeof error?.param === 'string') param = error.param;
  } catch {
    // not JSON: keep the generic message; raw upstream bodies are never shown
  }
  if (status === 413) return new GatewayError('payload_too_large', message);
  return new GatewayError('bad_request', message, param === undefined ? {} : { param });
}

/** Upstream statuses worth another channel: overload, throttling, timeouts and server faults. */
export function isRetryableUpstreamStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408 || status === 409;
}

/** Upstream rejected our own credential or permissions: the caller did nothing wrong. */
export function isUpstreamCredentialFailure(status: number): boolean {
  return status === 401 || status === 403;
}
