import type { RawData } from 'ws';
import type { RealtimeDialect } from '../realtime-dialect.js';

/** What one frame (or the session's start) becomes: frames for each side, and maybe the end of the session. */
export interface Translated {
  toUpstream: string[];
  toClient: string[];
  /** The session ends with this close code and reason (the caller's protocol has no error event for it). */
  end?: { code: number; reason: string };
}

/**
 * A realtime session between a caller and an upstream that speak different event protocols: every frame is read,
 * turned into the other protocol's frames (zero or more, either way), and the session's state (open response, items,
 * audio rates) is kept here. Frames to the caller go as text, or as binary when `clientBinary` (as Google sends them).
 */
export interface FrameTranslator {
  readonly clientBinary: boolean;
  /** What goes each way as the session starts (OpenAI's `session.created`, the upstream's session configuration). */
  start(): Translated;
  fromClient(frame: Buffer): Translated;
  fromUpstream(frame: Buffer): Translated;
}

export function emptyTranslated(): Translated {
  return { toUpstream: [], toClient: [] };
}

export function frameBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** A JSON object frame's fields, else null. */
export function parseObject(frame: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(frame.toString('utf8'));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectOf(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : {};
}

export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The dialect of a translated session: the upstream's reading of frames for billing (what the upstream reported is
 * what is charged) and cancel, the caller's way of telling why a session ends (its error event, close reason, drain
 * notice). Usage rows name the caller's protocol.
 */
export function translatedDialect(client: RealtimeDialect, upstream: RealtimeDialect): RealtimeDialect {
  return {
    protocol: client.protocol,
    watch: (data, binary) => upstream.watch(data, binary),
    errorFrame: (error) => client.errorFrame(error),
    closeReason: (error, fallback) => client.closeReason(error, fallback),
    cancelFrame: () => upstream.cancelFrame(),
    drainNotice: (deadlineMs) => client.drainNotice(deadlineMs),
  };
}
