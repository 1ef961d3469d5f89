import type { OperatorRole } from '../../storage/repositories/operator-repository.js';

/** What an operator role may do. Reads are open to every role; changes are decided here and nowhere else. */
export type OperatorPermission = 'read' | 'write' | 'support:reply' | 'operators:manage';

const GRANTS: Readonly<Record<OperatorRole, ReadonlySet<OperatorPermission>>> = {
  owner: new Set(['read', 'write', 'support:reply', 'operators:manage']),
  admin: new Set(['read', 'write', 'support:reply']),
  support: new Set(['read', 'support:reply']),
  viewer: new Set(['read']),
};

export function operatorAllows(role: OperatorRole, permission: OperatorPermission): boolean {
  return GRANTS[role].has(permission);
}

/** The permission an admin API call needs: GET reads; replying to a ticket is support's; every other change is a write. */
export function permissionForAdminCall(method: string, adminPath: string): OperatorPermission {
  if (method === 'GET' || method === 'HEAD') return 'read';
  if (method === 'POST' && /^\/admin\/support\/tickets\/[^/]+\/replies$/.test(adminPath)) return 'support:reply';
  return 'write';
}
