import { randomBytes } from 'node:crypto';

/** A client's MCP session with the gateway: whose key opened it, for which servers, at which protocol revision. */
export interface ClientSession {
  keyId: string;
  /** The server of `/mcp/{server}`, or null for `/mcp` (every server the key may use). */
  scope: string | null;
  protocolVersion: string;
  lastUsedAt: number;
}

/** Sessions held at once per instance; the least recently used goes first beyond it. */
const MAX_SESSIONS = 20_000;
/** A session unused this long is forgotten (the client then initializes again, as the protocol has it on a 404). */
const IDLE_MS = 60 * 60 * 1000;

/**
 * The sessions this instance issued (`Mcp-Session-Id`): a random 256-bit id bound to the key and endpoint that
 * opened it, so another key (another account's) presenting it is refused as if it did not exist.
 */
export class ClientSessions {
  readonly #sessions = new Map<string, ClientSession>();

  open(keyId: string, scope: string | null, protocolVersion: string, now: number): string {
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { keyId, scope, protocolVersion, lastUsedAt: now });
    while (this.#sessions.size > MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    return id;
  }

  /** The live session `id` of this key and endpoint, refreshed; null when unknown, expired or someone else's. */
  use(id: string, keyId: string, scope: string | null, now: number): ClientSession | null {
    const session = this.#sessions.get(id);
    if (session === undefined) return null;
    if (now - session.lastUsedAt > IDLE_MS) {
      this.#sessions.delete(id);
      return null;
    }
    if (session.keyId !== keyId || session.scope !== scope) return null;
    // Re-inserted so the map's order stays least recently used first.
    this.#sessions.delete(id);
    session.lastUsedAt = now;
    this.#sessions.set(id, session);
    return session;
  }

  close(id: string, keyId: string, scope: string | null, now: number): boolean {
    if (this.use(id, keyId, scope, now) === null) return false;
    return this.#sessions.delete(id);
  }
}
