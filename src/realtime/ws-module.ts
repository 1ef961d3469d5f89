import { loadOnce } from '../shared/load-once.js';

/**
 * The WebSocket library, loaded at the first realtime session (the caller's handshake or the upstream's opening)
 * rather than at start: a gateway that serves no realtime sessions never needs it.
 */
export const webSocketModule = loadOnce(() => import('ws'));
