import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { limitInput } from '../management/limit-input.js';
import { parseInput } from '../management/parse-input.js';
import { isoTime } from '../management/time-input.js';
import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/storage.js';
import type { McpLimitOverride, McpPolicy, McpPolicyOwner } from '../storage/repositories/mcp-policy-repository.js';
import { toolRuleInput } from './mcp-server-input.js';

/** A server's name, or `<server>__<tool>`: what a rule or a limit is keyed by. */
const ruleTarget = z.string().min(1).max(200);

const policySchema = z.object({
  /** Account: the servers its keys may use (public or not; null: the public ones). Project: narrows its account's. */
  allowed_servers: z.array(z.string().min(1).max(64)).max(1_000).nullable().optional(),
  /** Rules by `<server>` or `<server>__<tool>`; they narrow the server's own rules, never widen them. */
  tool_rules: z.record(ruleTarget, toolRuleInput).refine((value) => Object.keys(value).length <= 1_000, 'at most 1000 rules').optional(),
  /** Limits by server name, replacing the server's own for these keys (null: none). */
  limits: z.record(z.string().min(1).max(64), z.object({ calls_per_minute: limitInput, concurrency: limitInput }).strict())
    .refine((value) => Object.keys(value).length <= 1_000, 'at most 1000 servers').optional(),
}).strict();

export function mcpPolicyToJson(ownerKind: McpPolicyOwner, ownerId: string, policy: McpPolicy | null): Record<string, unknown> {
  return {
    object: 'mcp_policy',
    owner_kind: ownerKind,
    owner_id: ownerId,
    allowed_servers: policy?.allowedServers ?? null,
    tool_rules: policy?.toolRules ?? {},
    limits: Object.fromEntries(Object.entries(policy?.limits ?? {}).map(([server, override]) => [server, {
      ...(override.callsPerMinute === undefined ? {} : { calls_per_minute: override.callsPerMinute }),
      ...(override.concurrency === undefined ? {} : { concurrency: override.concurrency }),
    }])),
    updated_at: policy === null ? null : isoTime(policy.updatedAt),
  };
}

/**
 * The MCP policies of accounts, projects and keys (`/admin/{accounts|projects|keys}/{id}/mcp-policy`): which servers,
 * which tools and at what limits. PUT replaces the whole policy; DELETE removes it.
 */
export class McpPolicyManagement {
  constructor(private readonly storage: Pick<Storage, 'accounts' | 'keys' | 'projects' | 'mcpPolicies'>, private readonly clock: Clock) {}

  async get(ownerKind: McpPolicyOwner, ownerId: string): Promise<Record<string, unknown>> {
    await this.existingOwner(ownerKind, ownerId);
    return mcpPolicyToJson(ownerKind, ownerId, await this.storage.mcpPolicies.get(ownerKind, ownerId));
  }

  async put(ownerKind: McpPolicyOwner, ownerId: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseInput(policySchema, body);
    await this.existingOwner(ownerKind, ownerId);
    if (ownerKind === 'key' && input.allowed_servers !== undefined && input.allowed_servers !== null) {
      throw new GatewayError('bad_request', "A key's servers are its 'allowed_mcp_servers' (PATCH /admin/keys/{id}).", { param: 'allowed_servers' });
    }
    const limits: Record<string, McpLimitOverride> = {};
    for (const [server, entry] of Object.entries(input.limits ?? {})) {
      limits[server] = {
        ...(entry.calls_per_minute === undefined ? {} : { callsPerMinute: entry.calls_per_minute }),
        ...(entry.concurrency === undefined ? {} : { concurrency: entry.concurrency }),
      };
    }
    const policy: McpPolicy = { ownerKind, ownerId, allowedServers: input.allowed_servers ?? null, toolRules: input.tool_rules ?? {}, limits, updatedAt: this.clock.now() };
    await this.storage.mcpPolicies.put(policy);
    return mcpPolicyToJson(ownerKind, ownerId, policy);
  }

  async delete(ownerKind: McpPolicyOwner, ownerId: string): Promise<void> {
    await this.existingOwner(ownerKind, ownerId);
    await this.storage.mcpPolicies.delete(ownerKind, ownerId);
  }

  private async existingOwner(ownerKind: McpPolicyOwner, ownerId: string): Promise<void> {
    const exists = ownerKind === 'account' ? (await this.storage.accounts.getById(ownerId)) !== null
      : ownerKind === 'project' ? (await this.storage.projects.getById(ownerId)) !== null
        : (await this.storage.keys.getById(ownerId)) !== null;
    if (!exists) throw new GatewayError('not_found', `No ${ownerKind} '${ownerId}'.`);
  }
}
