import { GatewayError } from '../../errors/gateway-error.js';
import { bindGuardrails, takeGuardrailNames } from '../../guardrail-policies/guardrail-admin.js';
import { parseInput } from '../../management/parse-input.js';
import { createProjectSchema, updateProjectSchema } from '../../projects/project-input.js';
import { createProject, deleteProject, projectViews, requireProject, updateProject } from '../../projects/project-management.js';
import type { GatewayServices } from '../../services.js';
import type { Account } from '../../domain/records.js';
import { sendJson } from '../respond.js';
import { notFound, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';
import { guardrailAdminOf } from './guardrail-routes.js';

/**
 * The admin API's projects of an account: /admin/accounts/:id/projects (create, list with the default project first)
 * and /admin/accounts/:id/projects/:project_id (read, change, delete). Keys join a project with `project_id`; the
 * project's `guardrails` (policy names, any the operator has) run on its keys' requests.
 */
export const PROJECT_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage } = services;
  const requireAccount = async (id: string, live: boolean): Promise<Account> => {
    const account = await storage.accounts.getById(id);
    if (account === null) throw notFound('account', id);
    if (live && account.status === 'deleted') throw new GatewayError('conflict', 'This account has been deleted.');
    return account;
  };
  return { services, storage, requireAccount };
}, [
  { method: 'POST', path: '/admin/accounts/:id/projects', handler: ({ services, storage, requireAccount }) => async (context) => {
    const account = await requireAccount(context.params.id ?? '', true);
    const body = await readAdminBody(context);
    const guardrails = await takeGuardrailNames(storage.guardrails, body);
    const input = parseInput(createProjectSchema, body);
    const project = await createProject(services, account.id, input);
    if (guardrails !== undefined && guardrails.length > 0) await bindGuardrails(guardrailAdminOf(services), 'project', project.id, guardrails);
    sendJson(context, 201, (await projectViews(services, account.id)).json(project));
  } },

  { method: 'GET', path: '/admin/accounts/:id/projects', handler: ({ services, storage, requireAccount }) => async (context) => {
    const account = await requireAccount(context.params.id ?? '', false);
    const views = await projectViews(services, account.id);
    const projects = await storage.projects.listByAccount(account.id);
    sendJson(context, 200, { object: 'list', data: [views.defaultJson(), ...projects.map(views.json)], next_cursor: null });
  } },

  { method: 'GET', path: '/admin/accounts/:id/projects/:project_id', handler: ({ services, storage, requireAccount }) => async (context) => {
    const account = await requireAccount(context.params.id ?? '', false);
    const views = await projectViews(services, account.id);
    if (context.params.project_id === 'default') {
      sendJson(context, 200, views.defaultJson());
      return;
    }
    sendJson(context, 200, views.json(await requireProject(storage, account.id, context.params.project_id ?? '')));
  } },

  { method: 'PATCH', path: '/admin/accounts/:id/projects/:project_id', handler: ({ services, storage, requireAccount }) => async (context) => {
    const account = await requireAccount(context.params.id ?? '', true);
    const existing = await requireProject(storage, account.id, context.params.project_id ?? '');
    const body = await readAdminBody(context);
    const guardrails = await takeGuardrailNames(storage.guardrails, body);
    const input = parseInput(updateProjectSchema, body);
    const updated = await updateProject(services, existing, input);
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(services), 'project', updated.id, guardrails);
    sendJson(context, 200, (await projectViews(services, account.id)).json(updated));
  } },

  { method: 'DELETE', path: '/admin/accounts/:id/projects/:project_id', handler: ({ services, storage, requireAccount }) => async (context) => {
    const account = await requireAccount(context.params.id ?? '', false);
    const project = await requireProject(storage, account.id, context.params.project_id ?? '');
    await deleteProject(services, project);
    sendJson(context, 200, { id: project.id, object: 'project', deleted: true });
  } },
]);
