import type { IncomingHttpHeaders } from 'node:http';
import type { ClientFamily } from '../codecs/client-family.js';
import { openAIFamily } from '../codecs/openai-chat/family.js';

/** The subprotocol a browser's WebSocket carries its key in (browsers cannot set an Authorization header). */
const KEY_PROTOCOL_PREFIX = 'openai-insecure-api-key.';
/** The subprotocol form of the `OpenAI-Beta: realtime=v1` header (the beta protocol). */
const BETA_PROTOCOL = 'openai-beta.realtime-v1';

/** The subprotocols a handshake offers (`Sec-WebSocket-Protocol`, comma-separated). */
export function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const raw = headers['sec-websocket-protocol'];
  if (typeof raw !== 'string') return [];
  return raw.split(',').map((protocol) => protocol.trim()).filter((protocol) => protocol !== '');
}

/** The key a browser put in the subprotocol list (`openai-insecure-api-key.<key>`), else null. */
export function subprotocolKey(headers: IncomingHttpHeaders): string | null {
  const offered = offeredProtocols(headers).find((protocol) => protocol.startsWith(KEY_PROTOCOL_PREFIX));
  const key = offered?.slice(KEY_PROTOCOL_PREFIX.length) ?? '';
  return key === '' ? null : key;
}

/** The `OpenAI-Beta` header to send upstream: the caller's header, or its subprotocol form; null for the GA protocol. */
export function betaHeader(headers: IncomingHttpHeaders): string | null {
  const header = headers['openai-beta'];
  if (typeof header === 'string' && /^realtime=v1$/i.test(header.trim())) return 'realtime=v1';
  return offeredProtocols(headers).includes(BETA_PROTOCOL) ? 'realtime=v1' : null;
}

/**
 * OpenAI's Realtime clients: errors and rate-limit headers as OpenAI's, the key from `Authorization: Bearer` (the
 * SDK's Node client) or from the subprotocol list (a browser's WebSocket).
 */
export const realtimeFamily: ClientFamily = {
  ...openAIFamily,
  readApiKey: (headers, query) => openAIFamily.readApiKey(headers, query) ?? subprotocolKey(headers),
  keyHint: 'Send it as "Authorization: Bearer <API_KEY>", or from a browser as the subprotocol "openai-insecure-api-key.<API_KEY>" beside "realtime".',
};
