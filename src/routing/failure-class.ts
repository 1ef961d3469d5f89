/**
 * Why one upstream attempt failed, as routing and metrics see it. The caller's own errors (a 4xx the upstream
 * relays) and caller disconnects are not failures of the channel and have no class here.
 */
export type UpstreamFailureClass =
  /** Connection refused, DNS failure or connect timeout: the upstream host cannot be reached. */
  | 'connect'
  /** The connection dropped before the upstream answered. */
  | 'reset'
  /** No response head within the channel's first-byte timeout. */
  | 'first_byte_timeout'
  /** The body went silent for longer than the channel's idle timeout. */
  | 'idle_timeout'
  /** The body ended or broke off before the answer was complete. */
  | 'cut'
  /** 5xx, 408 or 409. */
  | 'server_error'
  /** 429. */
  | 'throttled'
  /** The upstream rejected the channel's key (401/403, or the adapter recognised a bad key). */
  | 'credential'
  /** The channel cannot serve now (quota, billing, region), as the adapter classified the answer. */
  | 'unavailable'
  /** A 2xx answer the gateway could not read. */
  | 'bad_response'
  /** The upstream reported an error inside a stream it had started. */
  | 'stream_error';

export const UPSTREAM_FAILURE_CLASSES: readonly UpstreamFailureClass[] = [
  'connect', 'reset', 'first_byte_timeout', 'idle_timeout', 'cut', 'server_error', 'throttled', 'credential', 'unavailable', 'bad_response', 'stream_error',
];

/**
 * Which breaker a failure counts against. Failures of the host or of the channel's account (unreachable, key
 * rejected, quota) count against the channel as a whole; failures of an answer (5xx, throttling, timeouts, cut
 * streams) against the channel-model only, so one overloaded model does not take the channel's other models
 * out of the pool.
 */
export function failureScope(failureClass: UpstreamFailureClass): 'channel' | 'model' {
  switch (failureClass) {
    case 'connect':
    case 'reset':
    case 'credential':
    case 'unavailable':
      return 'channel';
    case 'first_byte_timeout':
    case 'idle_timeout':
    case 'cut':
    case 'server_error':
    case 'throttled':
    case 'bad_response':
    case 'stream_error':
      return 'model';
    default: {
      const unknown: never = failureClass;
      throw new Error(`unknown failure class ${String(unknown)}`);
    }
  }
}

/** One failed attempt, as reported to channel health. */
export interface AttemptFailure {
  failureClass: UpstreamFailureClass;
  /** The upstream's Retry-After on a 429, in ms: the channel-model is skipped that long. */
  retryAfterMs: number | null;
}
