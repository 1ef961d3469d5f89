/** A W3C `traceparent`: the trace, the caller's span in it, and whether the caller records it (sampled flag). */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
  /** The flags byte as sent (two hex digits), kept when the header is passed on unchanged. */
  flags: string;
}

const HEX = /^[0-9a-f]+$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

/**
 * Parses a `traceparent` header (W3C Trace Context level 1): `version-traceid-parentid-flags`, lowercase hex.
 * Version `ff`, all-zero ids and malformed fields make the header invalid (null: the request starts a new trace).
 * A later version is read by its first four fields, as the recommendation asks of version-00 parsers.
 */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | null {
  if (typeof header !== 'string') return null;
  const value = header.trim();
  if (value.length < 55) return null;
  const version = value.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return null;
  if (version === '00' ? value.length !== 55 : value.length > 55 && value[55] !== '-') return null;
  if (value[2] !== '-' || value[35] !== '-' || value[52] !== '-') return null;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(spanId) || !HEX.test(flags) || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1, flags };
}

/** A version-00 `traceparent` naming `spanId` as the parent of what the receiver does. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/** The longest `tracestate` passed on (the W3C limit is 32 members; 512 characters is what vendors must accept). */
const MAX_TRACESTATE_LENGTH = 512;

/** The caller's `tracestate`, passed on as is when it is a plausible list; null when absent, oversized or unprintable. */
export function readTracestate(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > MAX_TRACESTATE_LENGTH || !/^[\x20-\x7e]+$/.test(trimmed)) return null;
  return trimmed;
}
