import type { RawData } from 'ws';
import type { Usage } from '../ir/usage.js';
import type { RealtimeErrorDetail } from './realtime-events.js';

/** What the gateway reads off an upstream frame: a response starting, or one finished with what it used. */
export type DialectEvent =
  | { kind: 'response-started' }
  /** `status`: `completed`, or why it stopped short (`cancelled`, `incomplete`, `failed`); `usage`: null when none was reported. */
  | { kind: 'response-done'; status: string; usage: Usage | null };

/**
 * The event protocol of a realtime session as far as the relay needs it: the relay itself passes frames through
 * unchanged and asks the dialect only what a frame means for billing and how to end a session in the protocol's own
 * terms. One dialect per wire protocol (OpenAI Realtime, Gemini Live).
 */
export interface RealtimeDialect {
  /** The protocol's name in usage rows. */
  readonly protocol: string;
  /** Reads an upstream frame; null for the frames billing does not care about (most of them, unparsed). */
  watch(data: RawData, binary: boolean): DialectEvent | null;
  /** The frame that tells the caller why the session ends, sent before the close; null when the protocol has none. */
  errorFrame(error: RealtimeErrorDetail): string | null;
  /** The close frame's reason (at most 123 bytes) for a session ended for `error`. */
  closeReason(error: RealtimeErrorDetail, fallback: string): string;
  /** Sent upstream when the caller leaves mid-response so the upstream stops and reports what it used; null: none. */
  cancelFrame(): string | null;
  /** Sent to the caller as the instance starts draining (the session ends within `deadlineMs`); null: none. */
  drainNotice(deadlineMs: number): string | null;
}

/** The longest close reason RFC 6455 allows (a control frame's 125 bytes less the code). */
const MAX_REASON_BYTES = 123;

/** `text` cut to fit a close frame's reason, on a character boundary. */
export function closeReasonText(text: string): string {
  if (Buffer.byteLength(text) <= MAX_REASON_BYTES) return text;
  let cut = text;
  while (Buffer.byteLength(`${cut}…`) > MAX_REASON_BYTES) cut = cut.slice(0, -1);
  return `${cut}…`;
}
