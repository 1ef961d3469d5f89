import { GatewayError } from '../../errors/gateway-error.js';
import { bindGuardrails, boundGuardrails, takeAccountGuardrailNames } from '../../guardrail-policies/guardrail-admin.js';
import { guardrailAdminOf } from '../../http/admin/guardrail-routes.js';
import type { ConsoleProjectJson, ProjectJson } from '../../contract/projects.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { DEFAULT_PROJECT_ID, type Project, type ProjectRole } from '../../domain/project.js';
import { createProjectSchema, projectMemberSchema, projectMemberToJson, updateProjectSchema } from '../../projects/project-input.js';
import { createProject, deleteProject, projectViews, requireProject, updateProject } from '../../projects/project-management.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';
import type { ActiveSession } from '../session-store.js';

/**
 * The account's projects in the console. Everyone who reads keys lists the projects they may see (a member scoped to
 * projects: those, with their role); owners and admins create, change and delete projects, choose their members and
 * attach to them the guardrail policies the operator lets accounts use (as on keys).
 */
export const PROJECT_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;

  /** A project the caller may see; any other id (another account's, or outside their projects) is "not found". */
  const visibleProject = async (active: ActiveSession, id: string): Promise<Project> => {
    const project = await requireProject(storage, active.session.accountId, id);
    if (active.projects !== null && !active.projects.roles.has(project.id)) throw new GatewayError('not_found', `No project with id '${id}'.`);
    return project;
  };
  const withRole = (json: ProjectJson, active: ActiveSession, id: string): ConsoleProjectJson => ({
    ...json,
    // The caller's role inside the project: their project role when scoped, else their account role.
    your_role: active.projects === null ? active.role : active.projects.roles.get(id) ?? null,
  });
  return { deps, storage, clock, visibleProject, withRole };
}, [
  { method: 'GET', path: '/api/projects', who: 'member', permission: 'keys:read', handler: ({ deps, storage, withRole }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const views = await projectViews(deps.services, accountId);
    const projects = (await storage.projects.listByAccount(accountId)).filter((project) => active.projects === null || active.projects.roles.has(project.id));
    const data = projects.map((project) => withRole(views.json(project), active, project.id));
    sendJson(context, 200, { data: active.projects === null ? [withRole(views.defaultJson(), active, DEFAULT_PROJECT_ID), ...data] : data });
  } },

  { method: 'GET', path: '/api/projects/:id', who: 'member', permission: 'keys:read', handler: ({ deps, visibleProject, withRole }) => async ({ context, active }) => {
    const id = context.params.id ?? '';
    const views = await projectViews(deps.services, active.session.accountId);
    if (id === DEFAULT_PROJECT_ID && active.projects === null) {
      sendJson(context, 200, { project: withRole(views.defaultJson(), active, id) });
      return;
    }
    const project = await visibleProject(active, id);
    sendJson(context, 200, { project: withRole(views.json(project), active, project.id) });
  } },

  { method: 'POST', path: '/api/projects', who: 'member', permission: 'members:write', handler: ({ deps, storage, withRole }) => async ({ context, active }) => {
    const body = await readConsoleBody(context);
    const guardrails = await takeAccountGuardrailNames(storage.guardrails, body, []);
    const input = parseInput(createProjectSchema, body);
    const project = await createProject(deps.services, active.session.accountId, input);
    if (guardrails !== undefined && guardrails.length > 0) await bindGuardrails(guardrailAdminOf(deps.services), 'project', project.id, guardrails);
    sendJson(context, 201, { project: withRole((await projectViews(deps.services, project.accountId)).json(project), active, project.id) });
  } },

  { method: 'PATCH', path: '/api/projects/:id', who: 'member', permission: 'members:write', handler: ({ deps, storage, visibleProject, withRole }) => async ({ context, active }) => {
    // Another project than the caller's is "not found", whatever their role.
    const existing = await visibleProject(active, context.params.id ?? '');
    const body = await readConsoleBody(context);
    const guardrails = await takeAccountGuardrailNames(storage.guardrails, body, await boundGuardrails(storage.guardrails, 'project', existing.id));
    const input = parseInput(updateProjectSchema, body);
    const updated = await updateProject(deps.services, existing, input);
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(deps.services), 'project', updated.id, guardrails);
    sendJson(context, 200, { project: withRole((await projectViews(deps.services, updated.accountId)).json(updated), active, updated.id) });
  } },

  { method: 'DELETE', path: '/api/projects/:id', who: 'member', permission: 'members:write', handler: ({ deps, storage }) => async ({ context, active }) => {
    const project = await requireProject(storage, active.session.accountId, context.params.id ?? '');
    await deleteProject(deps.services, project);
    sendJson(context, 200, { id: project.id, deleted: true });
  } },

  { method: 'GET', path: '/api/projects/:id/members', who: 'member', permission: 'members:read', handler: ({ storage }) => async ({ context, active }) => {
    const project = await requireProject(storage, active.session.accountId, context.params.id ?? '');
    const members = await storage.projects.members(project.id);
    const data = await Promise.all(members.map(async (member) => projectMemberToJson(member, (await storage.console.getUserById(member.userId))?.email ?? null)));
    sendJson(context, 200, { data });
  } },

  // Adds a member of the account to the project, or changes their project role.
  { method: 'PUT', path: '/api/projects/:id/members/:userId', who: 'member', permission: 'members:write', handler: ({ storage, clock }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const project = await requireProject(storage, accountId, context.params.id ?? '');
    const userId = context.params.userId ?? '';
    const input = parseInput(projectMemberSchema.omit({ user_id: true }), await readConsoleBody(context));
    const membership = await storage.console.getMembership(accountId, userId);
    if (membership === null) throw new GatewayError('not_found', `No member with id '${userId}' on this account: invite them to the account first.`);
    if (membership.role === 'owner' || membership.role === 'admin') {
      throw new GatewayError('conflict', 'Owners and admins see every project of the account; give a project role to developers, billing members and viewers.');
    }
    const member = { projectId: project.id, accountId, userId, role: input.role as ProjectRole, createdAt: clock.now() };
    await storage.projects.setMember(member);
    sendJson(context, 200, { member: projectMemberToJson(member, (await storage.console.getUserById(userId))?.email ?? null) });
  } },

  { method: 'DELETE', path: '/api/projects/:id/members/:userId', who: 'member', permission: 'members:write', handler: ({ storage }) => async ({ context, active }) => {
    const project = await requireProject(storage, active.session.accountId, context.params.id ?? '');
    const userId = context.params.userId ?? '';
    if (!(await storage.projects.removeMember(project.id, userId))) throw new GatewayError('not_found', `No member with id '${userId}' in this project.`);
    sendJson(context, 200, { project_id: project.id, user_id: userId, deleted: true });
  } },
]);
