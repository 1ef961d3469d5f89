import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ApiKey } from '../domain/records.js';
import type { ConcurrencySlot, LimitRule } from '../limits/rate-limiter.js';
import type { McpPolicy, McpPolicyOwner, McpPolicyRepository } from '../storage/repositories/mcp-policy-repository.js';
import type { McpServer, McpServerRepository, McpToolRule } from '../storage/repositories/mcp-server-repository.js';
import { GatewayError } from '../errors/gateway-error.js';
import { gatewayToolName } from './tool-names.js';

/** The rules from least to most permissive: where several levels set one, the most restrictive holds. */
const STRICTNESS: Record<McpToolRule, number> = { refused: 0, read_only: 1, allowed: 2 };

/** The account's, project's and key's MCP policies, from the widest to the narrowest (absent ones left out). */
export interface McpPolicies {
  readonly account: McpPolicy | null;
  readonly project: McpPolicy | null;
  readonly key: McpPolicy | null;
}

export const NO_POLICIES: McpPolicies = { account: null, project: null, key: null };

/** The policies that apply to `key`: its account's, its project's (if it has one) and its own, in one query. */
export async function policiesOf(repository: McpPolicyRepository, key: Pick<ApiKey, 'id' | 'accountId' | 'projectId'>): Promise<McpPolicies> {
  const owners: Array<{ kind: McpPolicyOwner; id: string }> = [{ kind: 'account', id: key.accountId }, { kind: 'key', id: key.id }];
  if (key.projectId != null) owners.push({ kind: 'project', id: key.projectId });
  const found = await repository.ofOwners(owners);
  const of = (kind: McpPolicyOwner): McpPolicy | null => found.find((policy) => policy.ownerKind === kind) ?? null;
  return { account: of('account'), project: key.projectId == null ? null : of('project'), key: of('key') };
}

const levels = (policies: McpPolicies): McpPolicy[] => [policies.account, policies.project, policies.key].filter((policy): policy is McpPolicy => policy !== null);

/**
 * The servers an account's keys may use when they name none: the ones the operator gave the account (its policy's
 * list, public or not), else every public one. A key's own list may name only these from the console.
 */
export function serversOfAccount(servers: readonly McpServer[], account: McpPolicy | null): McpServer[] {
  const granted = account?.allowedServers ?? null;
  return servers.filter((server) => server.enabled && (granted === null ? server.public : granted.includes(server.name)));
}

/**
 * The servers a key may use: enabled ones that its own list names (null: its account's, see `serversOfAccount`), and
 * that the account's and the project's allowlists (where set) name too: a project narrows its account, never widens.
 */
export function serversOfKey(key: Pick<ApiKey, 'allowedMcpServers'>, servers: readonly McpServer[], policies: McpPolicies = NO_POLICIES): McpServer[] {
  const allowed = key.allowedMcpServers ?? null;
  const base = allowed === null ? serversOfAccount(servers, policies.account) : servers.filter((server) => server.enabled && allowed.includes(server.name));
  const narrowing = levels(policies).map((policy) => policy.allowedServers).filter((list): list is string[] => list !== null);
  return base.filter((server) => narrowing.every((list) => list.includes(server.name)));
}

/**
 * The rule for `tool` of `server`: the server's own (for that tool, else its default) and each level's override
 * (for `<server>__<tool>`, else for `<server>`), the most restrictive of them holding, so an account, project or key
 * may narrow what the operator allows and never widen it.
 */
export function toolRule(server: McpServer, tool: string, policies: McpPolicies = NO_POLICIES): McpToolRule {
  let rule: McpToolRule = server.toolRules.tools[tool] ?? server.toolRules.default;
  const qualified = gatewayToolName(server.name, tool);
  for (const policy of levels(policies)) {
    const override = policy.toolRules[qualified] ?? policy.toolRules[server.name];
    if (override !== undefined && STRICTNESS[override] < STRICTNESS[rule]) rule = override;
  }
  return rule;
}

/** The server declares the tool read-only (MCP's `readOnlyHint` annotation). */
export function declaredReadOnly(tool: Pick<Tool, 'annotations'>): boolean {
  return tool.annotations?.readOnlyHint === true;
}

/** Whether a tool under `rule` may be listed and called: `read_only` only when its server declares it read-only. */
export function ruleAdmits(rule: McpToolRule, tool: Pick<Tool, 'annotations'>): boolean {
  switch (rule) {
    case 'allowed': return true;
    case 'read_only': return declaredReadOnly(tool);
    case 'refused': return false;
    default: {
      const unknown: never = rule;
      return unknown;
    }
  }
}

/** A key's limits on one server: calls a minute and at once (null: none). */
export interface McpCallLimits {
  callsPerMinute: number | null;
  concurrency: number | null;
}

/** The key's limits on `server`: the key's override, else the project's, else the account's, else the server's. */
export function callLimits(server: McpServer, policies: McpPolicies = NO_POLICIES): McpCallLimits {
  const override = (pick: 'callsPerMinute' | 'concurrency'): number | null => {
    for (const policy of [policies.key, policies.project, policies.account]) {
      const value = policy?.limits[server.name]?.[pick];
      if (value !== undefined) return value;
    }
    return server[pick];
  };
  return { callsPerMinute: override('callsPerMinute'), concurrency: override('concurrency') };
}

const MINUTE_MS = 60_000;

/** The windows and slots one call of `key` on `server` counts in (per key and server). */
export function callLimitRules(server: McpServer, keyId: string, limits: McpCallLimits): { windows: LimitRule[]; slots: ConcurrencySlot[] } {
  const scope = `mcp:${server.id}:key:${keyId}`;
  return {
    windows: limits.callsPerMinute === null ? [] : [{ id: `${scope}:cpm`, dimension: `mcp-calls-per-minute:${server.name}`, limit: limits.callsPerMinute, windowMs: MINUTE_MS }],
    slots: limits.concurrency === null ? [] : [{ id: `${scope}:concurrency`, limit: limits.concurrency }],
  };
}

/**
 * A key's list of servers as an account member may set it (from the console): only servers the account may use,
 * so a member cannot reach a server the operator did not open to the account. Throws the spec's 400 otherwise.
 */
export async function refuseServersNotGranted(storage: { mcpServers: McpServerRepository; mcpPolicies: McpPolicyRepository }, accountId: string, names: readonly string[] | null | undefined): Promise<void> {
  if (names == null || names.length === 0) return;
  const granted = new Set(serversOfAccount(await storage.mcpServers.list(), await storage.mcpPolicies.get('account', accountId)).map((server) => server.name));
  const refused = names.filter((name) => !granted.has(name));
  if (refused.length > 0) {
    throw new GatewayError('bad_request', `This account may not use the MCP server${refused.length === 1 ? '' : 's'} ${refused.map((name) => `'${name}'`).join(', ')}.`, { param: 'allowed_mcp_servers' });
  }
}
