import { GatewayError } from '../errors/gateway-error.js';
import type { ProjectRole } from '../domain/project.js';
import type { ApiKey } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';
import type { AccountRole } from '../storage/repositories/console-repository.js';
import type { ConsolePermission } from './roles.js';

/**
 * What a console user may reach when they are a member of one or more projects of the session's account and not
 * its owner or admin: those projects only, with their project role. Null: the whole account (as the account role
 * allows) — every user of an account that never made a project.
 */
export interface ProjectScope {
  roles: ReadonlyMap<string, ProjectRole>;
}

/** What a project role allows inside its project; everything else of the account (billing, members, webhooks) is closed. */
const PROJECT_GRANTS: Readonly<Record<ProjectRole, ReadonlySet<ConsolePermission>>> = {
  developer: new Set(['account:read', 'keys:read', 'keys:write', 'usage:read']),
  viewer: new Set(['account:read', 'keys:read', 'usage:read']),
};

/** Owners and admins manage projects: they are never scoped to them. */
export async function projectScopeOf(storage: Storage, accountId: string, userId: string, role: AccountRole): Promise<ProjectScope | null> {
  if (role === 'owner' || role === 'admin') return null;
  const memberships = await storage.projects.membershipsOf(accountId, userId);
  if (memberships.length === 0) return null;
  return { roles: new Map(memberships.map((membership) => [membership.projectId, membership.role])) };
}

/** Whether one of the scope's project roles allows `permission` at all (each key is then checked against its own project). */
export function projectScopeAllows(scope: ProjectScope, permission: ConsolePermission): boolean {
  for (const role of scope.roles.values()) if (PROJECT_GRANTS[role].has(permission)) return true;
  return false;
}

/** Whether the key is one the caller may see (unscoped callers see every key of the account). */
export function keyInScope(scope: ProjectScope | null, key: Pick<ApiKey, 'projectId'>): boolean {
  return scope === null || (key.projectId != null && scope.roles.has(key.projectId));
}

/** Whether the caller may change keys of the project (null: the default project) beyond what the account role allows. */
export function mayWriteProject(scope: ProjectScope | null, projectId: string | null): boolean {
  return scope === null || (projectId !== null && scope.roles.get(projectId) === 'developer');
}

/** 403 unless the caller may change keys of the project. */
export function requireProjectWrite(scope: ProjectScope | null, projectId: string | null): void {
  if (!mayWriteProject(scope, projectId)) {
    throw new GatewayError('forbidden', projectId === null
      ? 'You are a member of projects of this account: create keys in one of your projects (project_id).'
      : 'Your role in this project does not allow changing its keys.');
  }
}

/** The usage filter's keys for a scoped caller: the keys of their projects (null: no narrowing). */
export async function scopedKeyIds(storage: Storage, accountId: string, scope: ProjectScope | null): Promise<string[] | null> {
  if (scope === null) return null;
  const ids: string[] = [];
  for (const projectId of scope.roles.keys()) ids.push(...(await storage.projects.keyIds(accountId, projectId)));
  return ids;
}
