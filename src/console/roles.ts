import type { AccountRole } from '../storage/repositories/console-repository.js';

/** What a console request may do on its account. */
export type ConsolePermission =
  | 'account:read' | 'keys:read' | 'keys:write' | 'usage:read' | 'playground:use'
  | 'billing:read' | 'billing:write' | 'members:read' | 'members:write' | 'alerts:write' | 'webhooks:manage'
  /** The account's own MCP servers (when the operator allows them). */
  | 'mcp:manage'
  /** Turning off or relaxing, for the account, its projects and keys, the operator's guardrail policies that allow it. */
  | 'guardrails:manage';

const GRANTS: Readonly<Record<AccountRole, ReadonlySet<ConsolePermission>>> = {
  owner: new Set(['account:read', 'keys:read', 'keys:write', 'usage:read', 'playground:use', 'billing:read', 'billing:write', 'members:read', 'members:write', 'alerts:write', 'webhooks:manage', 'mcp:manage', 'guardrails:manage']),
  admin: new Set(['account:read', 'keys:read', 'keys:write', 'usage:read', 'playground:use', 'billing:read', 'billing:write', 'members:read', 'members:write', 'alerts:write', 'webhooks:manage', 'mcp:manage', 'guardrails:manage']),
  // Keys and usage: developers make and use keys but neither spend the account's money nor read its invoices.
  developer: new Set(['account:read', 'keys:read', 'keys:write', 'usage:read', 'playground:use', 'members:read']),
  // Top-ups, billing details and invoices.
  billing: new Set(['account:read', 'usage:read', 'billing:read', 'billing:write', 'members:read']),
  viewer: new Set(['account:read', 'keys:read', 'usage:read', 'billing:read', 'members:read']),
};

/** The one place that decides whether a role may do something. */
export function roleAllows(role: AccountRole, permission: ConsolePermission): boolean {
  return GRANTS[role].has(permission);
}

/** The roles that hold `permission`, for error messages and the members page. */
export function rolesAllowed(permission: ConsolePermission): AccountRole[] {
  return (Object.keys(GRANTS) as AccountRole[]).filter((role) => GRANTS[role].has(permission));
}
