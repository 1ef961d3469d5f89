import type { Kysely } from 'kysely';
import { toNumber } from '../convert.js';
import type { McpSessionDatabase } from '../mcp-session-schema.js';
import { tableAccess, type TableMapping } from './table-access.js';

/** A client's MCP session as stored: whose key opened it, on which endpoint, at which protocol revision. */
export interface StoredMcpSession {
  idHash: string;
  keyId: string;
  /** The server of `/mcp/{server}`, or null for `/mcp`. */
  scope: string | null;
  protocolVersion: string;
  createdAt: number;
  lastUsedAt: number;
}

export interface McpSessionRepository {
  create(session: StoredMcpSession): Promise<void>;
  get(idHash: string): Promise<StoredMcpSession | null>;
  touch(idHash: string, now: number): Promise<void>;
  delete(idHash: string): Promise<boolean>;
  /** Ends sessions last used before `cutoff`; how many. */
  deleteIdleBefore(cutoff: number): Promise<number>;
  /** Ends all but the `keep` most recently used sessions of a key; how many. */
  trimKey(keyId: string, keep: number): Promise<number>;
}

const SESSIONS: TableMapping<'mcp_client_sessions', StoredMcpSession, never, McpSessionDatabase> = {
  table: 'mcp_client_sessions',
  key: 'id_hash',
  keyOf: (session) => session.idHash,
  toRecord: (row) => ({
    idHash: row.id_hash, keyId: row.key_id, scope: row.scope, protocolVersion: row.protocol_version,
    createdAt: toNumber(row.created_at), lastUsedAt: toNumber(row.last_used_at),
  }),
  toRow: (session) => ({
    id_hash: session.idHash,
    key_id: session.keyId,
    scope: session.scope,
    protocol_version: session.protocolVersion,
    created_at: session.createdAt,
    last_used_at: session.lastUsedAt,
  }),
};

export function createMcpSessionRepository(db: Kysely<McpSessionDatabase>): McpSessionRepository {
  const sessions = tableAccess(db, SESSIONS);
  return {
    create: sessions.insert,
    get: sessions.get,
    async touch(idHash, now) {
      await db.updateTable('mcp_client_sessions').set({ last_used_at: now }).where('id_hash', '=', idHash).where('last_used_at', '<', now).execute();
    },
    delete: sessions.delete,
    async deleteIdleBefore(cutoff) {
      const result = await db.deleteFrom('mcp_client_sessions').where('last_used_at', '<', cutoff).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async trimKey(keyId, keep) {
      const kept = db.selectFrom('mcp_client_sessions').select('id_hash').where('key_id', '=', keyId).orderBy('last_used_at', 'desc').orderBy('id_hash').limit(keep);
      const result = await db.deleteFrom('mcp_client_sessions').where('key_id', '=', keyId).where('id_hash', 'not in', kept).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
