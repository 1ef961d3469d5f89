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
import { refuseServersNotGranted } from '../../mcp/mcp-access.js';
import type { ApiKeyJson, CreatedKeyJson, KeyAnswerJson, KeyListJson } from '../../contract/keys.js';

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
  /** Keys as admission sees them: queued charges written first, in-flight holds and the account's status counted. */
  const keyJsonOf = (accountId: string): Promise<(key: ApiKey) => ApiKeyJson> => keyViewOf(deps.services, accountId);
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

  { method: 'GET', path: '/api/keys/:id', who: 'member', permission: 'keys:read', handler: ({ ownKey, keyJsonOf }) => async ({ context, active }) => {
    const key = await ownKey(active.session.accountId, context.params.id ?? '', active.projects);
    sendJson(context, 200, { key: (await keyJsonOf(key.accountId))(key) } satisfies KeyAnswerJson);
  } },

  { method: 'POST', path: '/api/keys', who: 'member', permission: 'keys:write', handler: ({ storage, clock, keys, config }) => async ({ context, active }) => {
    const input = parseInput(createKeySchema, await readConsoleBody(context));
    requireProjectWrite(active.projects, input.project_id === 'default' ? null : input.project_id ?? null);
    await refuseServersNotGranted(storage, active.session.accountId, input.allowed_mcp_servers);
    const now = clock.now();
    const { key, plaintext } = await createKey({ storage, keys, keyBrand: config.keyBrand }, active.session.accountId, input, active.user.id, now);
    sendJson(context, 201, { key: keyToJson(key, FRESH_KEY_STANDING, now), secret: plaintext } satisfies CreatedKeyJson);
  } },

  { method: 'PATCH', path: '/api/keys/:id', who: 'member', permission: 'keys:write', handler: ({ storage, clock, keys, ownKey, keyJsonOf }) => async ({ context, active }) => {
    const existing = await ownKey(active.session.accountId, context.params.id ?? '', active.projects);
    requireProjectWrite(active.projects, existing.projectId ?? null);
    const input = parseInput(updateKeySchema, await readConsoleBody(context));
    await refuseServersNotGranted(storage, existing.accountId, input.allowed_mcp_servers);
    const projectId = await keyProjectFromInput(storage, existing.accountId, input.project_id);
    if (projectId !== undefined) requireProjectWrite(active.projects, projectId);
    if (input.status === 'revoked') throw new GatewayError('bad_request', "Revoke with POST /api/keys/{id}/revoke; 'status' takes enabled or disabled.", { param: 'status' });
    if (existing.status === 'revoked' && Object.keys(input).length > 0) throw new GatewayError('conflict', 'A revoked key is final and cannot be changed; create a new key.');
    const updated = await storage.keys.update(existing.id, { ...keyPatchFromInput(input, existing, clock.now()), ...(projectId === undefined ? {} : { projectId }) }, clock.now(), keyStatusEvent('account'));
    if (updated === null) throw new GatewayError('not_found', `No key with id '${existing.id}'.`);
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
