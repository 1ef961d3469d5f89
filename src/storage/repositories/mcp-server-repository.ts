import type { Kysely, Selectable, Updateable } from 'kysely';
import type { SecretBox } from '../../shared/secret-box.js';
import { fromBoolean, parseObject, parseStringRecord, toBoolean, toNullableBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { McpDatabase, McpServersTable } from '../mcp-schema.js';

export type McpTransport = 'streamable-http' | 'sse' | 'stdio';
export const MCP_TRANSPORTS: readonly McpTransport[] = ['streamable-http', 'sse', 'stdio'];

/** How the client authenticates at the token endpoint (RFC 6749 section 2.3.1). */
export type McpOAuthAuthMethod = 'client_secret_basic' | 'client_secret_post';
export const MCP_OAUTH_AUTH_METHODS: readonly McpOAuthAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** OAuth 2.1 client credentials an upstream server requires: where and as whom the gateway gets its access tokens. */
export interface McpOAuthSettings {
  tokenUrl: string;
  clientId: string;
  scope: string | null;
  audience: string | null;
  authMethod: McpOAuthAuthMethod;
}

/** A local server the gateway starts: its program and arguments (its environment is sealed, only its names shown). */
export interface McpStdioCommand {
  command: string;
  args: string[];
  envNames: string[];
}

/** What a key may do with a tool: call it, call it only if its server declares it read-only, or neither see nor call it. */
export type McpToolRule = 'allowed' | 'read_only' | 'refused';
export const MCP_TOOL_RULES: readonly McpToolRule[] = ['allowed', 'read_only', 'refused'];

/** A server's own rules: one for every tool, and rules for named tools. */
export interface McpToolRules {
  default: McpToolRule;
  tools: Record<string, McpToolRule>;
}

/** A tool as the last health check listed it (for the console). */
export interface McpToolSummary {
  name: string;
  description: string | null;
  /** The server declares it read-only (`annotations.readOnlyHint`). */
  readOnly: boolean;
}

export interface McpServerHealth {
  status: 'healthy' | 'unhealthy';
  /** Why the check failed (never a header value); null when healthy. */
  error: string | null;
  checkedAt: number;
  /** How long connecting and listing the tools took (null when the check failed). */
  latencyMs: number | null;
  /** The tools it listed (empty when unhealthy). */
  tools: McpToolSummary[];
}

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
  /** Calls a minute and calls at once, per key (null: no limit; accounts and keys may be given their own). */
  callsPerMinute: number | null;
  concurrency: number | null;
  /** Charged to the account per call (null: free). */
  pricePerCallNano: bigint | null;
  /** Usage rows keep each call's arguments and result (off unless the operator opts in). */
  logPayloads: boolean;
  toolRules: McpToolRules;
  /** The last health check (null: none yet). */
  health: McpServerHealth | null;
  /** OAuth client credentials the server is called with (null: none); the secret stays sealed (`oauthSecretOf`). */
  oauth: (McpOAuthSettings & { clientSecretSet: boolean }) | null;
  /** The program of a `stdio` server (null for HTTP servers); its environment stays sealed (`stdioEnvOf`). */
  stdio: McpStdioCommand | null;
  /** The account that registered it for its own keys (null: the operator's server). */
  ownerAccountId: string | null;
}

/** OAuth credentials as registered or changed: `clientSecret` undefined on a change keeps the sealed one. */
export interface McpOAuthInput {
  settings: McpOAuthSettings;
  clientSecret: string | undefined;
}

/** A stdio server's program as registered or changed: `env` undefined on a change keeps the sealed one. */
export interface McpStdioInput {
  command: string;
  args: string[];
  env: Record<string, string> | undefined;
}

/** The settings a server is registered with beyond its address (each defaulted when left out). */
type McpServerSettings = 'callsPerMinute' | 'concurrency' | 'pricePerCallNano' | 'logPayloads' | 'toolRules';

export interface NewMcpServer extends Omit<McpServer, 'headerNames' | 'health' | 'oauth' | 'stdio' | 'ownerAccountId' | McpServerSettings>, Partial<Pick<McpServer, McpServerSettings>> {
  headers: Record<string, string>;
  oauth?: McpOAuthInput | null;
  stdio?: McpStdioInput | null;
  ownerAccountId?: string | null;
}

export type McpServerPatch = Partial<Pick<McpServer, 'name' | 'url' | 'transport' | 'public' | 'enabled' | McpServerSettings>> & {
  headers?: Record<string, string>;
  /** null removes the credentials. */
  oauth?: McpOAuthInput | null;
  /** null makes the server an HTTP one again. */
  stdio?: McpStdioInput | null;
};

export const ALL_TOOLS_ALLOWED: McpToolRules = { default: 'allowed', tools: {} };

export interface McpServerRepository {
  create(server: NewMcpServer): Promise<void>;
  get(id: string): Promise<McpServer | null>;
  getByName(name: string): Promise<McpServer | null>;
  list(): Promise<McpServer[]>;
  update(id: string, patch: McpServerPatch, now: number): Promise<McpServer | null>;
  delete(id: string): Promise<boolean>;
  /** The server's static headers in clear, to call it; empty when it has none. */
  headersOf(id: string): Promise<Record<string, string>>;
  /** The OAuth client secret in clear, to get a token; null when the server has none. */
  oauthSecretOf(id: string): Promise<string | null>;
  /** A stdio server's environment variables in clear, to start it; empty when it has none. */
  stdioEnvOf(id: string): Promise<Record<string, string>>;
  /**
   * Keeps the result of a health check of the server as it was at `checkedVersion` (its `updatedAt`); false when the
   * server is gone or was changed since (a check of its old address or headers says nothing of the new ones).
   */
  recordHealth(id: string, health: McpServerHealth, checkedVersion?: number): Promise<boolean>;
}

function toolRulesOf(text: string | null): McpToolRules {
  if (text === null) return ALL_TOOLS_ALLOWED;
  const raw = parseObject(text, 'mcp_servers.tool_rules');
  const tools: Record<string, McpToolRule> = {};
  for (const [tool, rule] of Object.entries((raw.tools ?? {}) as Record<string, unknown>)) tools[tool] = toOneOf(String(rule), MCP_TOOL_RULES, 'mcp tool rule');
  return { default: toOneOf(String(raw.default ?? 'allowed'), MCP_TOOL_RULES, 'mcp tool rule'), tools };
}

function healthOf(row: Selectable<McpServersTable>): McpServerHealth | null {
  if (row.health_status === null || row.health_checked_at === null) return null;
  const listed: unknown = row.health_tools === null ? [] : JSON.parse(row.health_tools);
  const tools = Array.isArray(listed)
    ? listed.filter((tool): tool is McpToolSummary => typeof tool === 'object' && tool !== null && typeof (tool as McpToolSummary).name === 'string')
      .map((tool) => ({ name: tool.name, description: typeof tool.description === 'string' ? tool.description : null, readOnly: tool.readOnly === true }))
    : [];
  return { status: row.health_status === 'healthy' ? 'healthy' : 'unhealthy', error: row.health_error, checkedAt: toNumber(row.health_checked_at), latencyMs: toNullableNumber(row.health_latency_ms), tools };
}

function oauthOf(row: Selectable<McpServersTable>): McpServer['oauth'] {
  if (row.oauth === null) return null;
  const raw = parseObject(row.oauth, 'mcp_servers.oauth');
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  return {
    tokenUrl: String(raw.token_url ?? ''),
    clientId: String(raw.client_id ?? ''),
    scope: text(raw.scope),
    audience: text(raw.audience),
    authMethod: toOneOf(String(raw.auth_method ?? 'client_secret_basic'), MCP_OAUTH_AUTH_METHODS, 'mcp oauth auth method'),
    clientSecretSet: row.oauth_client_secret_sealed !== null,
  };
}

const oauthText = (settings: McpOAuthSettings): string => JSON.stringify({
  token_url: settings.tokenUrl, client_id: settings.clientId, scope: settings.scope, audience: settings.audience, auth_method: settings.authMethod,
});

const toolRulesText = (rules: McpToolRules): string | null => (rules.default === 'allowed' && Object.keys(rules.tools).length === 0 ? null : JSON.stringify(rules));

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
    callsPerMinute: toNullableNumber(row.calls_per_minute),
    concurrency: toNullableNumber(row.concurrency),
    pricePerCallNano: toNullableBigInt(row.price_per_call_nano),
    logPayloads: toBoolean(row.log_payloads),
    toolRules: toolRulesOf(row.tool_rules),
    health: healthOf(row),
    oauth: oauthOf(row),
    stdio: row.stdio_command === null ? null : {
      command: row.stdio_command,
      args: row.stdio_args === null ? [] : (JSON.parse(row.stdio_args) as unknown[]).map(String),
      envNames: Object.keys(open(row.stdio_env_sealed)).sort(),
    },
    ownerAccountId: row.owner_account_id ?? null,
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
        calls_per_minute: server.callsPerMinute ?? null,
        concurrency: server.concurrency ?? null,
        price_per_call_nano: server.pricePerCallNano ?? null,
        log_payloads: fromBoolean(server.logPayloads ?? false),
        tool_rules: toolRulesText(server.toolRules ?? ALL_TOOLS_ALLOWED),
        oauth: server.oauth == null ? null : oauthText(server.oauth.settings),
        oauth_client_secret_sealed: server.oauth?.clientSecret === undefined ? null : box.seal(server.oauth.clientSecret),
        stdio_command: server.stdio?.command ?? null,
        stdio_args: server.stdio == null ? null : JSON.stringify(server.stdio.args),
        stdio_env_sealed: server.stdio == null ? null : seal(server.stdio.env ?? {}),
        owner_account_id: server.ownerAccountId ?? null,
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
      if (patch.callsPerMinute !== undefined) changes.calls_per_minute = patch.callsPerMinute;
      if (patch.concurrency !== undefined) changes.concurrency = patch.concurrency;
      if (patch.pricePerCallNano !== undefined) changes.price_per_call_nano = patch.pricePerCallNano;
      if (patch.logPayloads !== undefined) changes.log_payloads = fromBoolean(patch.logPayloads);
      if (patch.toolRules !== undefined) changes.tool_rules = toolRulesText(patch.toolRules);
      if (patch.oauth === null) Object.assign(changes, { oauth: null, oauth_client_secret_sealed: null });
      if (patch.oauth != null) {
        changes.oauth = oauthText(patch.oauth.settings);
        if (patch.oauth.clientSecret !== undefined) changes.oauth_client_secret_sealed = box.seal(patch.oauth.clientSecret);
      }
      if (patch.stdio === null) Object.assign(changes, { stdio_command: null, stdio_args: null, stdio_env_sealed: null });
      if (patch.stdio != null) {
        Object.assign(changes, { stdio_command: patch.stdio.command, stdio_args: JSON.stringify(patch.stdio.args) });
        if (patch.stdio.env !== undefined) changes.stdio_env_sealed = seal(patch.stdio.env);
      }
      // A server moved elsewhere (or started or authorized otherwise) has not been checked there yet.
      if (patch.url !== undefined || patch.transport !== undefined || patch.headers !== undefined || patch.oauth !== undefined || patch.stdio !== undefined) {
        Object.assign(changes, { health_status: null, health_error: null, health_checked_at: null, health_tools: null, health_latency_ms: null });
      }
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
    async oauthSecretOf(id) {
      const row = await db.selectFrom('mcp_servers').select('oauth_client_secret_sealed').where('id', '=', id).executeTakeFirst();
      const sealed = row?.oauth_client_secret_sealed ?? null;
      return sealed === null ? null : box.open(sealed);
    },
    async stdioEnvOf(id) {
      const row = await db.selectFrom('mcp_servers').select('stdio_env_sealed').where('id', '=', id).executeTakeFirst();
      return open(row?.stdio_env_sealed ?? null);
    },
    async recordHealth(id, health, checkedVersion) {
      let update = db.updateTable('mcp_servers').set({
        health_status: health.status,
        health_error: health.error,
        health_checked_at: health.checkedAt,
        health_latency_ms: health.latencyMs,
        health_tools: JSON.stringify(health.tools),
      }).where('id', '=', id);
      if (checkedVersion !== undefined) update = update.where('updated_at', '=', checkedVersion);
      const result = await update.executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
