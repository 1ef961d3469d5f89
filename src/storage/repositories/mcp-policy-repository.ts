import type { Kysely, Selectable } from 'kysely';
import { parseNullableStringArray, parseObject, toNumber, toOneOf } from '../convert.js';
import type { McpDatabase, McpPoliciesTable } from '../mcp-schema.js';
import { MCP_TOOL_RULES, type McpToolRule } from './mcp-server-repository.js';

/** Who an MCP policy narrows or overrides: an account (all its keys), a project (its keys) or one key. */
export type McpPolicyOwner = 'account' | 'project' | 'key';
export const MCP_POLICY_OWNERS: readonly McpPolicyOwner[] = ['account', 'project', 'key'];

/** Limits a policy gives for one server: a number, null for none, absent to keep the server's. */
export interface McpLimitOverride {
  callsPerMinute?: number | null;
  concurrency?: number | null;
}

export interface McpPolicy {
  ownerKind: McpPolicyOwner;
  ownerId: string;
  /** The servers it may use at most (null: no narrowing). */
  allowedServers: string[] | null;
  /** Rules by `<server>` (every tool of it) or `<server>__<tool>`. */
  toolRules: Record<string, McpToolRule>;
  /** Limit overrides by server name. */
  limits: Record<string, McpLimitOverride>;
  updatedAt: number;
}

export interface McpPolicyRepository {
  get(ownerKind: McpPolicyOwner, ownerId: string): Promise<McpPolicy | null>;
  /** The policies of these owners that exist, in one query. */
  ofOwners(owners: ReadonlyArray<{ kind: McpPolicyOwner; id: string }>): Promise<McpPolicy[]>;
  put(policy: McpPolicy): Promise<void>;
  delete(ownerKind: McpPolicyOwner, ownerId: string): Promise<boolean>;
}

function toPolicy(row: Selectable<McpPoliciesTable>): McpPolicy {
  const toolRules: Record<string, McpToolRule> = {};
  for (const [name, rule] of Object.entries(row.tool_rules === null ? {} : parseObject(row.tool_rules, 'mcp_policies.tool_rules'))) {
    toolRules[name] = toOneOf(String(rule), MCP_TOOL_RULES, 'mcp tool rule');
  }
  const limits: Record<string, McpLimitOverride> = {};
  for (const [server, raw] of Object.entries(row.limits === null ? {} : parseObject(row.limits, 'mcp_policies.limits'))) {
    const entry = (raw ?? {}) as Record<string, unknown>;
    const override: McpLimitOverride = {};
    if ('calls_per_minute' in entry) override.callsPerMinute = entry.calls_per_minute === null ? null : toNumber(entry.calls_per_minute);
    if ('concurrency' in entry) override.concurrency = entry.concurrency === null ? null : toNumber(entry.concurrency);
    limits[server] = override;
  }
  return {
    ownerKind: toOneOf(row.owner_kind, MCP_POLICY_OWNERS, 'mcp policy owner'),
    ownerId: row.owner_id,
    allowedServers: parseNullableStringArray(row.allowed_servers, 'mcp_policies.allowed_servers'),
    toolRules,
    limits,
    updatedAt: toNumber(row.updated_at),
  };
}

function limitsText(limits: Record<string, McpLimitOverride>): string | null {
  const entries = Object.entries(limits);
  if (entries.length === 0) return null;
  return JSON.stringify(Object.fromEntries(entries.map(([server, override]) => [server, {
    ...(override.callsPerMinute === undefined ? {} : { calls_per_minute: override.callsPerMinute }),
    ...(override.concurrency === undefined ? {} : { concurrency: override.concurrency }),
  }])));
}

export function createMcpPolicyRepository(db: Kysely<McpDatabase>): McpPolicyRepository {
  return {
    async get(ownerKind, ownerId) {
      const row = await db.selectFrom('mcp_policies').selectAll().where('owner_kind', '=', ownerKind).where('owner_id', '=', ownerId).executeTakeFirst();
      return row === undefined ? null : toPolicy(row);
    },
    async ofOwners(owners) {
      if (owners.length === 0) return [];
      const rows = await db.selectFrom('mcp_policies').selectAll()
        .where('owner_id', 'in', owners.map((owner) => owner.id))
        .execute();
      return rows.filter((row) => owners.some((owner) => owner.kind === row.owner_kind && owner.id === row.owner_id)).map(toPolicy);
    },
    async put(policy) {
      const values = {
        allowed_servers: policy.allowedServers === null ? null : JSON.stringify(policy.allowedServers),
        tool_rules: Object.keys(policy.toolRules).length === 0 ? null : JSON.stringify(policy.toolRules),
        limits: limitsText(policy.limits),
        updated_at: policy.updatedAt,
      };
      await db.insertInto('mcp_policies')
        .values({ owner_kind: policy.ownerKind, owner_id: policy.ownerId, ...values })
        .onConflict((conflict) => conflict.columns(['owner_kind', 'owner_id']).doUpdateSet(values))
        .execute();
    },
    async delete(ownerKind, ownerId) {
      const result = await db.deleteFrom('mcp_policies').where('owner_kind', '=', ownerKind).where('owner_id', '=', ownerId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
