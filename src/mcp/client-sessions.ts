import { createHash, randomBytes } from 'node:crypto';
import type { McpSessionRepository } from '../storage/repositories/mcp-session-repository.js';

/** A client's MCP session with the gateway: whose key opened it, for which servers, at which protocol revision. */
export interface ClientSession {
  keyId: string;
  /** The server of `/mcp/{server}`, or null for `/mcp` (every server the key may use). */
  scope: string | null;
  protocolVersion: string;
  lastUsedAt: number;
}

/** Sessions one key holds at once; its least recently used go first beyond it. */
const MAX_SESSIONS_PER_KEY = 1000;
/** A session unused this long is forgotten (the client then initializes again, as the protocol has it on a 404). */
const IDLE_MS = 60 * 60 * 1000;
/** A session's last use is written at most this often (a busy session costs one write a minute, not one a request). */
const TOUCH_EVERY_MS = 60 * 1000;
/** How often an instance clears the sessions that went idle. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

const hashOf = (id: string): string => createHash('sha256').update(id).digest('hex');

/**
 * The sessions the gateway issued (`Mcp-Session-Id`): a random 256-bit id bound to the key and endpoint that opened
 * it, so another key (another account's) presenting it is refused as if it did not exist. They are kept in the
 * database (by the id's hash), so a client may send its next request to any instance sharing it; nothing of a
 * session lives in one instance's memory. Upstream servers are connected per request, so no upstream session has
 * to follow the client between instances.
 */
export class ClientSessions {
  #sweptAt = 0;

  constructor(private readonly store: McpSessionRepository) {}

  async open(keyId: string, scope: string | null, protocolVersion: string, now: number): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.store.create({ idHash: hashOf(id), keyId, scope, protocolVersion, createdAt: now, lastUsedAt: now });
    await this.store.trimKey(keyId, MAX_SESSIONS_PER_KEY);
    if (now - this.#sweptAt >= SWEEP_EVERY_MS) {
      this.#sweptAt = now;
      await this.store.deleteIdleBefore(now - IDLE_MS);
    }
    return id;
  }

  /** The live session `id` of this key and endpoint, refreshed; null when unknown, expired or someone else's. */
  async use(id: string, keyId: string, scope: string | null, now: number): Promise<ClientSession | null> {
    const idHash = hashOf(id);
    const session = await this.store.get(idHash);
    if (session === null) return null;
    if (now - session.lastUsedAt > IDLE_MS) {
      await this.store.delete(idHash);
      return null;
    }
    if (session.keyId !== keyId || session.scope !== scope) return null;
    if (now - session.lastUsedAt >= TOUCH_EVERY_MS) await this.store.touch(idHash, now);
    return { keyId: session.keyId, scope: session.scope, protocolVersion: session.protocolVersion, lastUsedAt: now };
  }

  async close(id: string, keyId: string, scope: string | null, now: number): Promise<boolean> {
    if (await this.use(id, keyId, scope, now) === null) return false;
    return this.store.delete(hashOf(id));
  }
}
