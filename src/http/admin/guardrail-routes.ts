import type { GuardrailPolicyListJson } from '../../contract/operator.js';
import { createGuardrail, deleteGuardrail, guardrailJson, updateGuardrail, type GuardrailAdmin } from '../../guardrail-policies/guardrail-admin.js';
import type { GatewayServices } from '../../services.js';
import { sendJson } from '../respond.js';
import { nameBindings } from './guardrail-binding-names.js';
import { notFound, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

/** Guardrail policies for admin callers and operators: the same rules as the API's. */
export function guardrailAdminOf(services: GatewayServices): GuardrailAdmin {
  return { repository: services.storage.guardrails, invalidation: services.invalidation, now: () => services.clock.now() };
}

/**
 * The admin API's guardrail policies: /admin/guardrails (create, list) and /admin/guardrails/:id (read with where it
 * is bound and which accounts override it, change, delete). Models, accounts and keys name the policies that apply to
 * them with `guardrails`.
 */
export const GUARDRAIL_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => ({ admin: guardrailAdminOf(services), storage: services.storage }), [
  { method: 'POST', path: '/admin/guardrails', handler: ({ admin }) => async (context) => {
    const record = await createGuardrail(admin, await readAdminBody(context));
    sendJson(context, 201, guardrailJson(record, [], []));
  } },
  { method: 'GET', path: '/admin/guardrails', handler: ({ admin, storage }) => async (context) => {
    const [records, bindings, overrides] = await Promise.all([admin.repository.list(), admin.repository.listBindings(), admin.repository.listOverrides()]);
    const shown = await nameBindings(storage, [...bindings, ...overrides]);
    sendJson(context, 200, { object: 'list', data: records.map((record) => guardrailJson(record, bindings, overrides, shown)), has_more: false, next_cursor: null } satisfies GuardrailPolicyListJson);
  } },
  { method: 'GET', path: '/admin/guardrails/:id', handler: ({ admin, storage }) => async (context) => {
    const id = context.params.id ?? '';
    const record = await admin.repository.getById(id);
    if (record === null) throw notFound('guardrail', id);
    const bindings = (await admin.repository.listBindings()).filter((binding) => binding.names.includes(record.name));
    const overrides = (await admin.repository.listOverrides()).filter((override) => override.guardrailId === record.id);
    sendJson(context, 200, guardrailJson(record, bindings, overrides, await nameBindings(storage, [...bindings, ...overrides])));
  } },
  { method: 'PATCH', path: '/admin/guardrails/:id', handler: ({ admin, storage }) => async (context) => {
    const record = await updateGuardrail(admin, context.params.id ?? '', await readAdminBody(context));
    const bindings = (await admin.repository.listBindings()).filter((binding) => binding.names.includes(record.name));
    const overrides = (await admin.repository.listOverrides()).filter((override) => override.guardrailId === record.id);
    sendJson(context, 200, guardrailJson(record, bindings, overrides, await nameBindings(storage, [...bindings, ...overrides])));
  } },
  { method: 'DELETE', path: '/admin/guardrails/:id', handler: ({ admin }) => async (context) => {
    const record = await deleteGuardrail(admin, context.params.id ?? '');
    sendJson(context, 200, { id: record.id, object: 'guardrail', deleted: true });
  } },
]);
