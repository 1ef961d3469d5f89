import { GatewayError } from '../../errors/gateway-error.js';
import { parseInput } from '../../management/parse-input.js';
import { createProjectSchema, updateProjectSchema } from '../../projects/project-input.js';
import { createProject, deleteProject, projectViews, requireProject, updateProject } from '../../projects/project-management.js';
import type { GatewayServices } from '../../services.js';
import type { Account } from '../../domain/records.js';
import type { Router } from '../router.js';
import { sendJson } from '../respond.js';
import { adminOnly, notFound, readAdminBody } from './admin-guard.js';

/**
 * The admin API's projects of an account: /admin/accounts/:id/projects (create, list with the default project first)
 * and /admin/accounts/:id/projects/:project_id (read, change, delete). Keys join a project with `project_id`.
 */
export function addProjectAdminRoutes(router: Router, services: GatewayServices): void {
  const { storage } = services;
  const guard = (handler: Parameters<typeof adminOnly>[1]) => adminOnly(services, handler);
  const requireAccount = async (id: string, live: boolean): Promise<Account> => {
    const account = await storage.accounts.getById(id);
    if (account === null) throw notFound('account', id);
    if (live && account.status === 'deleted') throw new GatewayError('conflict', 'This account has been deleted.');
    return account;
  };

  router.add('POST', '/admin/accounts/:id/projects', guard(async (context) => {
    const account = await requireAccount(context.params.id ?? '', true);
    const input = parseInput(createProjectSchema, await readAdminBody(context));
    const project = await createProject(services, account.id, input);
    sendJson(context, 201, (await projectViews(services, account.id)).json(project));
  }));

  router.add('GET', '/admin/accounts/:id/projects', guard(async (context) => {
    const account = await requireAccount(context.params.id ?? '', false);
    const views = await projectViews(services, account.id);
    const projects = await storage.projects.listByAccount(account.id);
    sendJson(context, 200, { object: 'list', data: [views.defaultJson(), ...projects.map(views.json)], next_cursor: null });
  }));

  router.add('GET', '/admin/accounts/:id/projects/:project_id', guard(async (context) => {
    const account = await requireAccount(context.params.id ?? '', false);
    const views = await projectViews(services, account.id);
    if (context.params.project_id === 'default') {
      sendJson(context, 200, views.defaultJson());
      return;
    }
    sendJson(context, 200, views.json(await requireProject(storage, account.id, context.params.project_id ?? '')));
  }));

  router.add('PATCH', '/admin/accounts/:id/projects/:project_id', guard(async (context) => {
    const account = await requireAccount(context.params.id ?? '', true);
    const existing = await requireProject(storage, account.id, context.params.project_id ?? '');
    const input = parseInput(updateProjectSchema, await readAdminBody(context));
    const updated = await updateProject(services, existing, input);
    sendJson(context, 200, (await projectViews(services, account.id)).json(updated));
  }));

  router.add('DELETE', '/admin/accounts/:id/projects/:project_id', guard(async (context) => {
    const account = await requireAccount(context.params.id ?? '', false);
    const project = await requireProject(storage, account.id, context.params.project_id ?? '');
    await deleteProject(services, project);
    sendJson(context, 200, { id: project.id, object: 'project', deleted: true });
  }));
}
