import type { AccountRole } from '../storage/repositories/console-repository.js';

/** What a console request may do on its account. */
export type ConsolePermission = 'account:read' | 'keys:read' | 'keys:write' | 'usage:read' | 'playground:use';

const GRANTS: Readonly<Record<AccountRole, ReadonlySet<ConsolePermission>>> = {
  owner: new Set(['account:read', 'keys:read', 'keys:write', 'usage:read', 'playground:use']),
  admin: new Set(['account:read', 'keys:read', 'keys:write', 'usage:read', 'playground:use']),
  developer: new Set(['account:read', 'keys:read', 'keys:write', 'usage:read', 'playground:use']),
  billing: new Set(['account:read', 'usage:read']),
  viewer: new Set(['account:read', 'keys:read', 'usage:read']),
};

/** The one place that decides whether a role may do something. */
export function roleAllows(role: AccountRole, permission: ConsolePermission): boolean {
  return GRANTS[role].has(permission);
}
