import type { AdminPermission } from '../../http/admin/admin-route.js';
import type { OperatorRole } from '../../storage/repositories/operator-repository.js';

/** What an operator role may do. Reads are open to every role; changes are decided here and nowhere else. */
export type OperatorPermission = AdminPermission | 'operators:manage';

const GRANTS: Readonly<Record<OperatorRole, ReadonlySet<OperatorPermission>>> = {
  owner: new Set(['read', 'write', 'support:reply', 'operators:manage']),
  admin: new Set(['read', 'write', 'support:reply']),
  support: new Set(['read', 'support:reply']),
  viewer: new Set(['read']),
};

export function operatorAllows(role: OperatorRole, permission: OperatorPermission): boolean {
  return GRANTS[role].has(permission);
}
