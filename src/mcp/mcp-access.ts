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
  return servers.filter((server) => server.enabled && (server.ownerAccountId !== null || (granted === null ? server.public : granted.includes(server.name))));
}

/**
 * The registered servers an account's keys may ever see: the operator's, and the account's own when the operator
 * allows account servers (another account's never, whatever its name). Every list a key's servers are taken from
 * passes through here first; `serversOfAccount` and `serversOfKey` then treat an owned server as the account's own.
 */
export function serversVisibleTo(servers: readonly McpServer[], accountId: string, accountServersAllowed: boolean): McpServer[] {
  return servers.filter((server) => server.ownerAccountId === null || (accountServersAllowed && server.ownerAccountId === accountId));
}

/**
 * The servers a key may use: enabled ones that its own list names (null: its account's, see `serversOfAccount`), and
 * that the account's and the project's allowlists (where set) name too: a project narrows its account, never widens.
 */
export function serversOfKey(key: Pick<ApiKey, 'allowedMcpServers'>, servers: readonly McpServer[], policies: McpPolicies = NO_POLICIES): McpServer[] {
  const allowed = key.allowedMcpServers ?? null;
  const base = allowed === null ? serversOfAccount(servers, policies.account) : servers.filter((server) => server.enabled && allowed.includes(server.name));
  // The account's policy is the operator's grant of its servers: it narrows those, never the account's own.
  const narrowing = levels(policies).map((policy) => ({ list: policy.allowedServers, grant: policy === policies.account }))
    .filter((level): level is { list: string[]; grant: boolean } => level.list !== null);
  return base.filter((server) => narrowing.every((level) => (level.grant && server.ownerAccountId !== null) || level.list.includes(server.name)));
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

/** Limits on one server: calls a minute and at once (null: none). */
export interface McpCallLimits {
  callsPerMinute: number | null;
  concurrency: number | null;
}

/** Who one level's limits count over: a key, a project or an account. */
export type McpLimitOwner = 'key' | 'project' | 'account';

/** One level's limits on a server, counted over all the calls of its owner on that server. */
export interface McpLevelLimits extends McpCallLimits {
  owner: McpLimitOwner;
  ownerId: string;
}

/**
 * The limits one call of `key` on `server` must fit, one entry per level that sets any: the key's own (its policy's
 * override, else the server's; null in the override: none) counted per key, its project's policy's counted over all the
 * project's keys, and its account's policy's counted over all the account's keys. Each level is its own window and
 * slot, so a wider level never lifts a narrower one's limit: a call fits all of them or is refused.
 */
export function callLimits(server: McpServer, key: Pick<ApiKey, 'id' | 'accountId' | 'projectId'>, policies: McpPolicies = NO_POLICIES): McpLevelLimits[] {
  const levelLimits = (policy: McpPolicy | null, fallback: McpCallLimits | null): McpCallLimits => {
    const override = policy?.limits[server.name];
    return {
      callsPerMinute: override?.callsPerMinute !== undefined ? override.callsPerMinute : fallback?.callsPerMinute ?? null,
      concurrency: override?.concurrency !== undefined ? override.concurrency : fallback?.concurrency ?? null,
    };
  };
  const found: McpLevelLimits[] = [
    { owner: 'key', ownerId: key.id, ...levelLimits(policies.key, server) },
    ...(key.projectId == null ? [] : [{ owner: 'project' as const, ownerId: key.projectId, ...levelLimits(policies.project, null) }]),
    { owner: 'account', ownerId: key.accountId, ...levelLimits(policies.account, null) },
  ];
  return found.filter((level) => level.callsPerMinute !== null || level.concurrency !== null);
}

const MINUTE_MS = 60_000;

/** The name of a level's calls-per-minute window on `server`, in refusals and rate-limit headers. */
const DIMENSION_PREFIX: Record<McpLimitOwner, string> = { key: '', project: 'project-', account: 'account-' };

/** The windows and slots one call counts in (one of each per level that sets it), and who each slot belongs to. */
export function callLimitRules(server: McpServer, levels: readonly McpLevelLimits[]): { windows: LimitRule[]; slots: ConcurrencySlot[]; slotOwner: (slot: ConcurrencySlot) => string } {
  const windows: LimitRule[] = [];
  const slots: ConcurrencySlot[] = [];
  const owners = new Map<string, McpLimitOwner>();
  for (const level of levels) {
    const scope = `mcp:${server.id}:${level.owner}:${level.ownerId}`;
    if (level.callsPerMinute !== null) {
      windows.push({ id: `${scope}:cpm`, dimension: `${DIMENSION_PREFIX[level.owner]}mcp-calls-per-minute:${server.name}`, limit: level.callsPerMinute, windowMs: MINUTE_MS });
    }
    if (level.concurrency !== null) {
      slots.push({ id: `${scope}:concurrency`, limit: level.concurrency });
      owners.set(`${scope}:concurrency`, level.owner);
    }
  }
  const slotOwner = (slot: ConcurrencySlot): string => {
    const owner = owners.get(slot.id) ?? 'key';
    return `${owner === 'key' ? 'this API key' : `this API key's ${owner}`} on the MCP server '${server.name}'`;
  };
  return { windows, slots, slotOwner };
}

/**
 * A key's list of servers as an account member may set it (from the console): only servers the account may use,
 * so a member cannot reach a server the operator did not open to the account. Throws the spec's 400 otherwise.
 */
export async function refuseServersNotGranted(storage: { mcpServers: McpServerRepository; mcpPolicies: McpPolicyRepository }, accountId: string, names: readonly string[] | null | undefined, accountServersAllowed: boolean): Promise<void> {
  if (names == null || names.length === 0) return;
  const visible = serversVisibleTo(await storage.mcpServers.list(), accountId, accountServersAllowed);
  const granted = new Set(serversOfAccount(visible, await storage.mcpPolicies.get('account', accountId)).map((server) => server.name));
  const refused = names.filter((name) => !granted.has(name));
  if (refused.length > 0) {
    throw new GatewayError('bad_request', `This account may not use the MCP server${refused.length === 1 ? '' : 's'} ${refused.map((name) => `'${name}'`).join(', ')}.`, { param: 'allowed_mcp_servers' });
  }
}
