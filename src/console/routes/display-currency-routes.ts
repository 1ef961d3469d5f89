import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import type { Storage } from '../../storage/storage.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { roleAllows } from '../roles.js';
import { consoleRoutes } from '../console-route-table.js';
import type { DisplayCurrencyJson } from '../../contract/account.js';

const BILLING_CURRENCY = 'USD';
const inputSchema = z.object({ currency: z.string().trim().toUpperCase().regex(/^[A-Z]{3}$/, 'must be a three-letter currency code') }).strict();

/** USD, and every currency the gateway publishes a rate for. */
async function choices(storage: Storage): Promise<string[]> {
  const fx = await storage.fx.get();
  return [BILLING_CURRENCY, ...Object.keys(fx?.rates ?? {}).filter((code) => code !== BILLING_CURRENCY).sort()];
}

/**
 * The currency the account's console shows prices and amounts in: one choice for every member of the account.
 * Amounts are converted in the browser at the published rate; money is charged and stored in USD.
 */
export const DISPLAY_CURRENCY_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;

  const answer = async (accountId: string, role: Parameters<typeof roleAllows>[0]): Promise<DisplayCurrencyJson> => {
    const available = await choices(storage);
    const chosen = await storage.displayCurrency.get(accountId);
    // A currency whose rate is no longer published falls back to USD until it is again.
    return { currency: chosen !== null && available.includes(chosen) ? chosen : BILLING_CURRENCY, choices: available, can_change: roleAllows(role, 'billing:write') };
  };
  return { deps, storage, clock, answer };
}, [
  { method: 'GET', path: '/api/console/display-currency', who: 'member', permission: 'account:read', handler: ({ answer }) => async ({ context, active }) => {
    sendJson(context, 200, await answer(active.session.accountId, active.role));
  } },

  { method: 'PUT', path: '/api/console/display-currency', who: 'member', permission: 'billing:write', handler: ({ storage, clock, answer }) => async ({ context, active }) => {
    const input = parseInput(inputSchema, await readConsoleBody(context));
    if (!(await choices(storage)).includes(input.currency)) {
      throw new GatewayError('bad_request', `'currency' must be USD or a currency the gateway publishes a rate for.`, { param: 'currency' });
    }
    await storage.displayCurrency.set(active.session.accountId, input.currency === BILLING_CURRENCY ? null : input.currency, clock.now());
    sendJson(context, 200, await answer(active.session.accountId, active.role));
  } },
]);
