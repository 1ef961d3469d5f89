import { keyStatusEvent } from '../../webhooks/key-events.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { createKeySchema, FRESH_KEY_STANDING, keyPatchFromInput, keyToJson, updateKeySchema } from '../../management/account-input.js';
import { keyViewOf } from '../../management/key-view.js';
import { createKey } from '../../management/create-key.js';
import { parseInput } from '../../management/parse-input.js';
import type { ApiKey } from '../../domain/records.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { keyInScope, requireProjectWrite, type ProjectScope } from '../project-scope.js';
import { keyProjectFromInput } from '../../projects/project-management.js';
import { consoleRoutes } from '../console-route-table.js';
import { refuseServersNotGranted, serversOfAccount, serversVisibleTo } from '../../mcp/mcp-access.js';
import type { ApiKeyJson, CreatedKeyJson, KeyAnswerJson, KeyListJson, OfferedGuardrailListJson, OfferedMcpServerListJson } from '../../contract/keys.js';
import { bindGuardrails, boundGuardrails, takeAccountGuardrailNames } from '../../guardrail-policies/guardrail-admin.js';
import { guardrailAdminOf } from '../../http/admin/guardrail-routes.js';

/** Keys listed at most (an account with more pages through the admin API). */
const MAX_LISTED_KEYS = 5000;

/** The account's keys, made through the same key code as the admin API (validation, issue, JSON, invalidation). */
export const KEY_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, keys, config } = deps.services;

  /** A key of the session's account that the keys page shows; anything else is "not found", never "forbidden". */
  const ownKey = async (accountId: string, id: string, scope: ProjectScope | null): Promise<ApiKey> => {
    const key = await storage.keys.getById(id);
    if (key === null || key.accountId !== accountId || key.playground || !keyInScope(scope, key)) throw new GatewayError('not_found', `No key with id '${id}'.`);
    return key;
  };
  /**
   * Keys as admission sees them (queued charges written first, in-flight holds and the account's status counted),
   * with the guardrail policies bound to each.
   */
  const keyJsonOf = async (accountId: string): Promise<(key: ApiKey) => ApiKeyJson> => {
    const [view, bindings] = await Promise.all([keyViewOf(deps.services, accountId), storage.guardrails.listBindings()]);
    const namesOf = new Map(bindings.filter((binding) => binding.scope === 'key').map((binding) => [binding.targetId, binding.names]));
    return (key) => ({ ...view(key), guardrails: namesOf.get(key.id) ?? [] });
  };
  return { deps, storage, clock, keys, config, ownKey, keyJsonOf };
}, [
  { method: 'GET', path: '/api/keys', who: 'member', permission: 'keys:read', handler: ({ storage, keyJsonOf }) => async ({ context, active }) => {
    const keyJson = await keyJsonOf(active.session.accountId);
    const listed: ApiKey[] = [];
    let after: string | null = null;
    do {
      const page = await storage.keys.listByAccount(active.session.accountId, { limit: 200, after }, { playground: false });
      listed.push(...page.data);
      after = page.nextCursor;
    } while (after !== null && listed.length < MAX_LISTED_KEYS);
    sendJson(context, 200, { data: listed.filter((key) => keyInScope(active.projects, key)).map(keyJson) } satisfies KeyListJson);
  } },

  /** The guardrail policies the operator lets accounts attach to their keys (names and what they do, not settings). */
  { method: 'GET', path: '/api/guardrails', who: 'member', permission: 'keys:read', handler: ({ storage }) => async ({ context }) => {
    const offered = (await storage.guardrails.list()).filter((record) => record.accounts_may_use === true);
    sendJson(context, 200, { data: offered.map((record) => ({ name: record.name, kind: record.kind, mode: record.mode, applies_to: record.applies_to })) } satisfies OfferedGuardrailListJson);
  } },

  /** The MCP servers the account's keys may name (the ones `refuseServersNotGranted` accepts): names only, never addresses. */
  { method: 'GET', path: '/api/mcp-servers', who: 'member', permission: 'keys:read', handler: ({ storage, config }) => async ({ context, active }) => {
    const granted = serversOfAccount(serversVisibleTo(await storage.mcpServers.list(), active.session.accountId, config.mcp.allowAccountServers), await storage.mcpPolicies.get('account', active.session.accountId));
    sendJson(context, 200, { data: granted.map((server) => ({ name: server.name })) } satisfies OfferedMcpServerListJson);
  } },

  { method: 'GET', path: '/api/keys/:id', who: 'member', permission: 'keys:read', handler: ({ ownKey, keyJsonOf }) => async ({ context, active }) => {
    const key = await ownKey(active.session.accountId, context.params.id ?? '', active.projects);
    sendJson(context, 200, { key: (await keyJsonOf(key.accountId))(key) } satisfies KeyAnswerJson);
  } },

  { method: 'POST', path: '/api/keys', who: 'member', permission: 'keys:write', handler: ({ deps, storage, clock, keys, config }) => async ({ context, active }) => {
    const body = await readConsoleBody(context);
    const guardrails = await takeAccountGuardrailNames(storage.guardrails, body, []);
    const input = parseInput(createKeySchema, body);
    requireProjectWrite(active.projects, input.project_id === 'default' ? null : input.project_id ?? null);
    await refuseServersNotGranted(storage, active.session.accountId, input.allowed_mcp_servers, config.mcp.allowAccountServers);
    const now = clock.now();
    const { key, plaintext } = await createKey({ storage, keys, keyBrand: config.keyBrand }, active.session.accountId, input, active.user.id, now);
    if (guardrails !== undefined && guardrails.length > 0) await bindGuardrails(guardrailAdminOf(deps.services), 'key', key.id, guardrails);
    sendJson(context, 201, { key: { ...keyToJson(key, FRESH_KEY_STANDING, now), guardrails: guardrails ?? [] }, secret: plaintext } satisfies CreatedKeyJson);
  } },

  { method: 'PATCH', path: '/api/keys/:id', who: 'member', permission: 'keys:write', handler: ({ deps, storage, clock, keys, ownKey, keyJsonOf }) => async ({ context, active }) => {
    const existing = await ownKey(active.session.accountId, context.params.id ?? '', active.projects);
    requireProjectWrite(active.projects, existing.projectId ?? null);
    const body = await readConsoleBody(context);
    const guardrails = await takeAccountGuardrailNames(storage.guardrails, body, await boundGuardrails(storage.guardrails, 'key', existing.id));
    const input = parseInput(updateKeySchema, body);
    await refuseServersNotGranted(storage, existing.accountId, input.allowed_mcp_servers, deps.services.config.mcp.allowAccountServers);
    const projectId = await keyProjectFromInput(storage, existing.accountId, input.project_id);
    if (projectId !== undefined) requireProjectWrite(active.projects, projectId);
    if (input.status === 'revoked') throw new GatewayError('bad_request', "Revoke with POST /api/keys/{id}/revoke; 'status' takes enabled or disabled.", { param: 'status' });
    if (existing.status === 'revoked' && (Object.keys(input).length > 0 || guardrails !== undefined)) throw new GatewayError('conflict', 'A revoked key is final and cannot be changed; create a new key.');
    const updated = await storage.keys.update(existing.id, { ...keyPatchFromInput(input, existing, clock.now()), ...(projectId === undefined ? {} : { projectId }) }, clock.now(), keyStatusEvent('account'));
    if (updated === null) throw new GatewayError('not_found', `No key with id '${existing.id}'.`);
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(deps.services), 'key', existing.id, guardrails);
    await keys.invalidateKey(existing.id);
    sendJson(context, 200, { key: (await keyJsonOf(updated.accountId))(updated) } satisfies KeyAnswerJson);
  } },

  { method: 'POST', path: '/api/keys/:id/revoke', who: 'member', permission: 'keys:write', handler: ({ storage, clock, keys, ownKey, keyJsonOf }) => async ({ context, active }) => {
    const existing = await ownKey(active.session.accountId, context.params.id ?? '', active.projects);
    requireProjectWrite(active.projects, existing.projectId ?? null);
    const updated = existing.status === 'revoked' ? existing : await storage.keys.update(existing.id, { status: 'revoked' }, clock.now());
    if (updated === null) throw new GatewayError('not_found', `No key with id '${existing.id}'.`);
    await keys.invalidateKey(existing.id);
    sendJson(context, 200, { key: (await keyJsonOf(updated.accountId))(updated) } satisfies KeyAnswerJson);
  } },
]);
