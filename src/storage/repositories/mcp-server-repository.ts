import type { Kysely, Selectable, Updateable } from 'kysely';
import type { SecretBox } from '../../shared/secret-box.js';
import { fromBoolean, parseStringRecord, toBoolean, toNumber, toOneOf } from '../convert.js';
import type { McpDatabase, McpServersTable } from '../mcp-schema.js';

export type McpTransport = 'streamable-http' | 'sse';
export const MCP_TRANSPORTS: readonly McpTransport[] = ['streamable-http', 'sse'];

/** An upstream MCP server as the operator registered it; its headers are held sealed and opened only to call it. */
export interface McpServer {
  id: string;
  name: string;
  url: string;
  transport: McpTransport;
  /** The names of its static headers (their values are secrets and never leave `headersOf`). */
  headerNames: string[];
  public: boolean;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface NewMcpServer extends Omit<McpServer, 'headerNames'> {
  headers: Record<string, string>;
}

export type McpServerPatch = Partial<Pick<McpServer, 'name' | 'url' | 'transport' | 'public' | 'enabled'>> & { headers?: Record<string, string> };

export interface McpServerRepository {
  create(server: NewMcpServer): Promise<void>;
  get(id: string): Promise<McpServer | null>;
  getByName(name: string): Promise<McpServer | null>;
  list(): Promise<McpServer[]>;
  update(id: string, patch: McpServerPatch, now: number): Promise<McpServer | null>;
  delete(id: string): Promise<boolean>;
  /** The server's static headers in clear, to call it; empty when it has none. */
  headersOf(id: string): Promise<Record<string, string>>;
}

export function createMcpServerRepository(db: Kysely<McpDatabase>, box: SecretBox): McpServerRepository {
  const seal = (headers: Record<string, string>): string | null => Object.keys(headers).length === 0 ? null : box.seal(JSON.stringify(headers));
  const open = (sealed: string | null): Record<string, string> => sealed === null ? {} : parseStringRecord(box.open(sealed), 'mcp_servers.headers');
  const toServer = (row: Selectable<McpServersTable>): McpServer => ({
    id: row.id,
    name: row.name,
    url: row.url,
    transport: toOneOf(row.transport, MCP_TRANSPORTS, 'mcp server transport'),
    headerNames: Object.keys(open(row.headers_sealed)).sort(),
    public: toBoolean(row.public),
    enabled: toBoolean(row.enabled),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  });
  const get = async (id: string): Promise<McpServer | null> => {
    const row = await db.selectFrom('mcp_servers').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : toServer(row);
  };
  return {
    async create(server) {
      await db.insertInto('mcp_servers').values({
        id: server.id,
        name: server.name,
        url: server.url,
        transport: server.transport,
        headers_sealed: seal(server.headers),
        public: fromBoolean(server.public),
        enabled: fromBoolean(server.enabled),
        created_at: server.createdAt,
        updated_at: server.updatedAt,
      }).execute();
    },
    get,
    async getByName(name) {
      const row = await db.selectFrom('mcp_servers').selectAll().where('name', '=', name).executeTakeFirst();
      return row === undefined ? null : toServer(row);
    },
    async list() {
      const rows = await db.selectFrom('mcp_servers').selectAll().orderBy('name').execute();
      return rows.map(toServer);
    },
    async update(id, patch, now) {
      const changes: Updateable<McpServersTable> = { updated_at: now };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.url !== undefined) changes.url = patch.url;
      if (patch.transport !== undefined) changes.transport = patch.transport;
      if (patch.public !== undefined) changes.public = fromBoolean(patch.public);
      if (patch.enabled !== undefined) changes.enabled = fromBoolean(patch.enabled);
      if (patch.headers !== undefined) changes.headers_sealed = seal(patch.headers);
      const result = await db.updateTable('mcp_servers').set(changes).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows === 0n ? null : get(id);
    },
    async delete(id) {
      const result = await db.deleteFrom('mcp_servers').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async headersOf(id) {
      const row = await db.selectFrom('mcp_servers').select('headers_sealed').where('id', '=', id).executeTakeFirst();
      return open(row?.headers_sealed ?? null);
    },
  };
}
