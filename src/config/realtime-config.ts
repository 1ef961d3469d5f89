import { integerSetting, SettingError } from './settings.js';
/** Realtime WebSocket sessions (docs/operators.md, "Realtime sessions"). */
export interface RealtimeConfig {
  /** A session in which neither side sent anything this long is closed (REALTIME_IDLE_SECONDS). */
  idleMs: number;
  /** A session is closed this long after it opened, whatever it is doing (REALTIME_MAX_SESSION_SECONDS). */
  maxSessionMs: number;
  /** The largest WebSocket message either side may send (REALTIME_MAX_MESSAGE_BYTES); a larger one closes with 1009. */
  maxMessageBytes: number;
  /** Each side is pinged this often and closed when a ping goes unanswered (REALTIME_PING_SECONDS). */
  pingMs: number;
  /**
   * Bytes queued for one side before the other side's reading pauses (REALTIME_BUFFER_BYTES): what a slow reader can
   * make the gateway hold, per direction, beyond one message.
   */
  bufferBytes: number;
  /** Ephemeral client secrets last this long unless the request asks for less (REALTIME_CLIENT_SECRET_SECONDS). */
  clientSecretMs: number;
}

export class RealtimeConfigError extends SettingError {
  override name = 'RealtimeConfigError';
}

/** OpenAI ends a realtime session after 60 minutes; its largest client event (an audio append) is 15 MiB. */
export function readRealtimeConfig(read: (name: string) => string | undefined): RealtimeConfig {
  return {
    idleMs: integerSetting(read, 'REALTIME_IDLE_SECONDS', 300, 1, 86_400) * 1000,
    maxSessionMs: integerSetting(read, 'REALTIME_MAX_SESSION_SECONDS', 3600, 1, 86_400) * 1000,
    maxMessageBytes: integerSetting(read, 'REALTIME_MAX_MESSAGE_BYTES', 16 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    pingMs: integerSetting(read, 'REALTIME_PING_SECONDS', 30, 1, 3600) * 1000,
    bufferBytes: integerSetting(read, 'REALTIME_BUFFER_BYTES', 1024 * 1024, 16 * 1024, 256 * 1024 * 1024),
    clientSecretMs: integerSetting(read, 'REALTIME_CLIENT_SECRET_SECONDS', 600, 10, 7200) * 1000,
  };
}
