import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { catalogFactsToJson, pricingToJson } from '../../catalog/model-json.js';
import type { ConsoleModelListJson } from '../../contract/models.js';
import type { CatalogModel } from '../../catalog/catalog-model.js';
import type { ApiKey } from '../../domain/records.js';
import type { ConsoleDeps } from '../console-deps.js';
import { roleAllows } from '../roles.js';
import { keyInScope } from '../project-scope.js';
import { consoleRoutes } from '../console-route-table.js';

/** Keys read at most to decide which models an account's keys may call. */
const MAX_READ_KEYS = 5000;

/** A key that can still call: not revoked and not past its expiry (a disabled key can be enabled again). */
function keyCanCall(key: ApiKey, now: number): boolean {
  return key.status !== 'revoked' && (key.expiresAt === null || key.expiresAt > now);
}

/** The key's allowlist names the model by its id or one of its aliases; no allowlist allows every model. */
function keyAllows(key: ApiKey, model: CatalogModel): boolean {
  const allowed = key.allowedModels;
  return allowed === null || allowed.includes(model.id) || model.aliases.some((alias) => allowed.includes(alias));
}

/**
 * The models the gateway routes, as the console shows them: prices, kind, context and capabilities, and which of the
 * account's keys may call each. `?key_id=` keeps the models that key may call (404 for a key of another account).
 */
export const MODEL_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, catalog, clock } = deps.services;

  const accountKeys = async (accountId: string): Promise<ApiKey[]> => {
    const keys: ApiKey[] = [];
    let after: string | null = null;
    do {
      const page = await storage.keys.listByAccount(accountId, { limit: 200, after }, { playground: false });
      keys.push(...page.data);
      after = page.nextCursor;
    } while (after !== null && keys.length < MAX_READ_KEYS);
    return keys;
  };
  return { deps, storage, catalog, clock, accountKeys };
}, [
  { method: 'GET', path: '/api/models', who: 'member', permission: 'account:read', handler: ({ catalog, clock, accountKeys }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const now = clock.now();
    const keyId = context.query.get('key_id');
    const readsKeys = roleAllows(active.role, 'keys:read');
    if (keyId !== null && !readsKeys) throw new GatewayError('forbidden', `Your role (${active.role}) on this account does not allow reading keys.`);
    const usable = (readsKeys ? await accountKeys(accountId) : []).filter((key) => keyCanCall(key, now) && keyInScope(active.projects, key));
    let models = catalog.models().filter((model) => catalog.hasRoute(model.id));
    if (keyId !== null) {
      const key = usable.find((candidate) => candidate.id === keyId);
      if (key === undefined) throw new GatewayError('not_found', `No usable key with id '${keyId}'.`, { param: 'key_id' });
      models = models.filter((model) => keyAllows(key, model));
    }
    models.sort((left, right) => left.id.localeCompare(right.id));
    sendJson(context, 200, {
      data: models.map((model) => {
        const facts = catalogFactsToJson(model);
        return {
          id: model.id,
          kind: model.kind,
          owned_by: model.ownedBy,
          pricing: pricingToJson(model.pricing),
          aliases: facts.aliases,
          context_window: facts.context_window,
          max_output_tokens: facts.max_output_tokens,
          modalities: facts.modalities,
          capabilities: facts.capabilities,
          ...(readsKeys ? { keys: usable.filter((key) => keyAllows(key, model)).map((key) => ({ id: key.id, name: key.name })) } : {}),
        };
      }),
    } satisfies ConsoleModelListJson);
  } },
]);
