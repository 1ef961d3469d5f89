import { PROJECT_ROLES, type Project, type ProjectRepository, type ProjectRole } from '../domain/project.js';

/** The prefix of a role-map value that grants a project instead of an account role: `project:<id or name>[:<role>]`. */
export const PROJECT_GRANT_PREFIX = 'project:';

/** A directory group's project grant; a grant without a role makes the person a project viewer (least privilege). */
export interface ProjectGrant {
  project: string;
  role: ProjectRole;
}

/** The project grant a role-map value names, or null when the value is an account role. */
export function parseProjectGrant(value: string): ProjectGrant | null {
  if (!value.startsWith(PROJECT_GRANT_PREFIX)) return null;
  const rest = value.slice(PROJECT_GRANT_PREFIX.length);
  const cut = rest.lastIndexOf(':');
  const role = cut < 0 ? undefined : PROJECT_ROLES.find((known) => known === rest.slice(cut + 1));
  const project = (role === undefined ? rest : rest.slice(0, cut)).trim();
  // A value ending in ':' names no role: a typing slip, never a project name.
  return project === '' || rest.endsWith(':') ? null : { project, role: role ?? 'viewer' };
}

/** Whether a role-map value is a well-formed project grant (checked when the map is saved). */
export function isProjectGrant(value: string): boolean {
  return parseProjectGrant(value) !== null;
}

/** The account's project a grant names: the one with that id, else the oldest one with that name. */
function projectOf(projects: readonly Project[], name: string): Project | undefined {
  return projects.find((project) => project.id === name) ?? projects.find((project) => project.name === name);
}

/**
 * Makes the person's project memberships follow their directory groups. Only the projects the role map names are the
 * directory's to manage: in each, the person holds the highest role any of their groups grants (developer over
 * viewer), or no membership when none does; memberships of other projects, given in the console, are left alone.
 * `groups` null: the person left the account, so every membership the directory manages ends.
 */
export async function syncDirectoryProjects(
  projects: ProjectRepository, accountId: string, userId: string, groups: readonly string[] | null, roleMap: Readonly<Record<string, string>>, now: number,
): Promise<void> {
  const grants = Object.entries(roleMap).map(([group, value]) => ({ group, grant: parseProjectGrant(value) }))
    .filter((entry): entry is { group: string; grant: ProjectGrant } => entry.grant !== null);
  if (grants.length === 0) return;
  const accountProjects = await projects.listByAccount(accountId);
  const managed = new Set<string>();
  const wanted = new Map<string, ProjectRole>();
  const held = new Set(groups ?? []);
  for (const { group, grant } of grants) {
    const project = projectOf(accountProjects, grant.project);
    if (project === undefined) continue;
    managed.add(project.id);
    if (!held.has(group)) continue;
    const current = wanted.get(project.id);
    if (current === undefined || PROJECT_ROLES.indexOf(grant.role) < PROJECT_ROLES.indexOf(current)) wanted.set(project.id, grant.role);
  }
  const memberships = await projects.membershipsOf(accountId, userId);
  for (const membership of memberships) {
    if (managed.has(membership.projectId) && !wanted.has(membership.projectId)) await projects.removeMember(membership.projectId, userId);
  }
  for (const [projectId, role] of wanted) {
    const existing = memberships.find((membership) => membership.projectId === projectId);
    if (existing?.role !== role) await projects.setMember({ projectId, accountId, userId, role, createdAt: existing?.createdAt ?? now });
  }
}
