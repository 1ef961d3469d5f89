import { z } from 'zod';
import { nanoToUsd } from '../../billing/money.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { redeemCode } from '../../redemption/redeem-code.js';
import { redeemFailureRules } from '../../redemption/redeem-limits.js';
import { rateLimitHeaders } from '../../limits/rate-limit-headers.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';
import type { FxRatesJson, RedemptionJson } from '../../contract/billing.js';

const redeemSchema = z.object({ code: z.string().trim().min(1).max(100) }).strict();

/**
 * The billing page's extras on the console origin: the gateway's published exchange rates (so the browser shows the
 * balance in JPY, CNY and EUR without calling the API origin) and redeeming a redemption code for the account.
 */
export const WALLET_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const services = deps.services;
  return { deps, services };
}, [
  { method: 'GET', path: '/api/console/fx', who: 'member', permission: 'account:read', handler: ({ services }) => async ({ context }) => {
    const fx = await services.storage.fx.get();
    if (fx === null) {
      sendJson(context, 200, { base: 'USD', rates: null, as_of: null, source: null } satisfies FxRatesJson);
      return;
    }
    const rates: Record<string, number> = {};
    for (const [currency, rate] of Object.entries(fx.rates)) rates[currency] = Number(rate);
    sendJson(context, 200, { base: fx.base, rates, as_of: new Date(fx.asOf).toISOString(), source: fx.source } satisfies FxRatesJson);
  } },

  // Failed attempts count per user and per address, as on the API's redeem endpoint; a success gives its attempt back.
  { method: 'POST', path: '/api/console/billing/redeem', who: 'member', permission: 'billing:write', handler: ({ services }) => async ({ context, active }) => {
    const rules = redeemFailureRules(`console-${active.user.id}`, context.clientIp);
    const chargedAt = services.clock.now();
    const decision = await services.limiter.consume(rules.map((rule) => ({ rule, cost: 1 })), chargedAt);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new GatewayError('rate_limit_exceeded', `Too many failed redemption attempts. Retry after ${seconds} s.`, { retryAfterSeconds: seconds, headers: rateLimitHeaders(decision.blocking) });
    }
    const giveBack = async (): Promise<void> => {
      for (const rule of rules) await services.limiter.adjust(rule, -1, chargedAt);
    };
    let redeemed;
    try {
      const input = parseInput(redeemSchema, await readConsoleBody(context));
      redeemed = await redeemCode(services, active.session.accountId, input.code);
    } catch (error) {
      if (!(error instanceof GatewayError) || error.status >= 500) await giveBack();
      throw error;
    }
    await giveBack();
    sendJson(context, 200, { object: 'redemption', code_id: redeemed.code.id, amount_usd: nanoToUsd(redeemed.code.amountNano), balance_usd: nanoToUsd(redeemed.balanceNano) } satisfies RedemptionJson);
  } },
]);
