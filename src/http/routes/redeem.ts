import { z } from 'zod';
import { nanoToUsd } from '../../billing/money.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { parseInput } from '../../management/parse-input.js';
import { redeemCode } from '../../redemption/redeem-code.js';
import { redeemFailureRules } from '../../redemption/redeem-limits.js';
import { rateLimitHeaders } from '../../limits/rate-limit-headers.js';
import type { GatewayServices } from '../../services.js';
import { authenticate } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';

const redeemSchema = z.object({ code: z.string().min(1).max(100) }).strict();

/**
 * POST /v1/dashboard/billing/redeem `{ code }` with the account's API key: tops the account up by the code's
 * amount, once. Failed attempts per key and per IP are limited (429 past the limit, see redeem-limits.ts).
 */
export function redeemRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const rules = redeemFailureRules(key.id, context.clientIp);
    const chargedAt = services.clock.now();
    const decision = await services.limiter.consume(rules.map((rule) => ({ rule, cost: 1 })), chargedAt);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new GatewayError('rate_limit_exceeded', `Too many failed redemption attempts. Retry after ${seconds} s.`, {
        retryAfterSeconds: seconds,
        headers: rateLimitHeaders(decision.blocking),
      });
    }
    let redeemed;
    try {
      const input = parseInput(redeemSchema, await readJsonObject(context, 16 * 1024));
      redeemed = await redeemCode(services, account.id, input.code);
    } catch (error) {
      // Only the caller's mistakes count as failures; a fault of ours gives the attempt back.
      if (!(error instanceof GatewayError) || error.status >= 500) await giveBack(services, rules, chargedAt);
      throw error;
    }
    await giveBack(services, rules, chargedAt);
    sendJson(context, 200, {
      object: 'redemption',
      code_id: redeemed.code.id,
      amount_usd: nanoToUsd(redeemed.code.amountNano),
      balance_usd: nanoToUsd(redeemed.balanceNano),
    });
  };
}

async function giveBack(services: GatewayServices, rules: ReturnType<typeof redeemFailureRules>, chargedAt: number): Promise<void> {
  for (const rule of rules) await services.limiter.adjust(rule, -1, chargedAt);
}
