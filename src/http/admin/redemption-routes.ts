import { z } from 'zod';
import type { RedemptionCodeJson } from '../../contract/operator.js';
import { nanoToUsd } from '../../billing/money.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { usdInput } from '../../management/money-input.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { parseInput } from '../../management/parse-input.js';
import { isoTime, timeInput } from '../../management/time-input.js';
import { redeemCode } from '../../redemption/redeem-code.js';
import { issueRedemptionCode } from '../../redemption/redemption-code.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import {
  redemptionCodeState, type RedemptionCode, type RedemptionCodeFilter, type RedemptionCodePatch, type RedemptionCodeState,
} from '../../storage/repositories/redemption-repository.js';
import { sendJson } from '../respond.js';
import { notFound, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

const MAX_BATCH = 1000;
const STATES: readonly RedemptionCodeState[] = ['active', 'redeemed', 'disabled', 'expired'];

const createSchema = z.object({
  amount_usd: usdInput.refine((nano) => nano > 0n, 'must be positive'),
  count: z.number().int().min(1).max(MAX_BATCH).optional(),
  expires_at: timeInput.nullable().optional(),
  name: z.string().max(100).optional(),
}).strict();

const updateSchema = z.object({
  name: z.string().max(100).optional(),
  expires_at: timeInput.nullable().optional(),
  disabled: z.boolean().optional(),
}).strict().refine((input) => Object.keys(input).length > 0, 'give at least one of name, expires_at, disabled');

const redeemSchema = z.object({ code: z.string().min(1).max(100) }).strict();

export function redemptionCodeToJson(code: RedemptionCode, now: number): RedemptionCodeJson {
  return {
    id: code.id,
    object: 'redemption_code',
    name: code.name,
    hint: code.hint,
    amount_usd: nanoToUsd(code.amountNano),
    state: redemptionCodeState(code, now),
    expires_at: isoTime(code.expiresAt),
    disabled_at: isoTime(code.disabledAt),
    redeemed_by: code.redeemedBy,
    redeemed_at: isoTime(code.redeemedAt),
    ledger_entry_id: code.ledgerEntryId,
    created_at: isoTime(code.createdAt),
    updated_at: isoTime(code.updatedAt),
  };
}

function filterFrom(query: URLSearchParams): RedemptionCodeFilter {
  const filter: RedemptionCodeFilter = {};
  const state = query.get('state');
  if (state !== null) {
    const known = STATES.find((candidate) => candidate === state);
    if (known === undefined) throw new GatewayError('bad_request', `'state' must be one of ${STATES.join(', ')}.`, { param: 'state' });
    filter.state = known;
  }
  const accountId = query.get('account_id');
  if (accountId !== null) filter.redeemedBy = accountId;
  return filter;
}

/** /admin/redemption-codes (create in batches, list, show, change, disable) and /admin/accounts/:id/redeem. */
export const REDEMPTION_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, clock } = services;

  const change = async (id: string, patch: RedemptionCodePatch): Promise<RedemptionCode> => {
    const updated = await storage.redemptionCodes.update(id, patch, clock.now());
    switch (updated.outcome) {
      case 'updated':
        return updated.code;
      case 'not_found':
        throw notFound('redemption code', id);
      case 'redeemed':
        throw new GatewayError('conflict', 'This redemption code has already been redeemed; its expiry and state can no longer change.');
      default: {
        const unknown: never = updated;
        throw new TypeError(`unknown update outcome ${JSON.stringify(unknown)}`);
      }
    }
  };
  return { services, storage, clock, change };
}, [
  { method: 'POST', path: '/admin/redemption-codes', handler: ({ services, storage, clock }) => async (context) => {
    const input = parseInput(createSchema, await readAdminBody(context));
    const now = clock.now();
    if (input.expires_at != null && input.expires_at <= now) throw new GatewayError('bad_request', "'expires_at' must be in the future.", { param: 'expires_at' });
    const issued = Array.from({ length: input.count ?? 1 }, () => issueRedemptionCode(services.config.keyBrand));
    const codes: RedemptionCode[] = issued.map((code) => ({
      id: newId('rc', now),
      codeHash: code.codeHash,
      hint: code.hint,
      name: input.name ?? '',
      amountNano: input.amount_usd,
      expiresAt: input.expires_at ?? null,
      disabledAt: null,
      redeemedBy: null,
      redeemedAt: null,
      ledgerEntryId: null,
      createdAt: now,
      updatedAt: now,
    }));
    await storage.redemptionCodes.createMany(codes);
    services.logger.info('redemption codes created', { count: codes.length, amountNano: input.amount_usd.toString() });
    // The plaintext codes exist only in this answer.
    sendJson(context, 201, {
      object: 'list',
      data: codes.map((code, index): RedemptionCodeJson => ({ ...redemptionCodeToJson(code, now), code: issued[index]?.plaintext })),
      has_more: false,
      next_cursor: null,
    });
  } },

  { method: 'GET', path: '/admin/redemption-codes', handler: ({ storage, clock }) => async (context) => {
    const now = clock.now();
    const page = await storage.redemptionCodes.list(filterFrom(context.query), pageRequestFrom(context.query), now);
    sendJson(context, 200, pageJson(page, (code) => redemptionCodeToJson(code, now)));
  } },

  { method: 'GET', path: '/admin/redemption-codes/:id', handler: ({ storage, clock }) => async (context) => {
    const id = context.params.id ?? '';
    const code = await storage.redemptionCodes.getById(id);
    if (code === null) throw notFound('redemption code', id);
    sendJson(context, 200, redemptionCodeToJson(code, clock.now()));
  } },

  { method: 'PATCH', path: '/admin/redemption-codes/:id', handler: ({ clock, change }) => async (context) => {
    const input = parseInput(updateSchema, await readAdminBody(context));
    const now = clock.now();
    const patch: RedemptionCodePatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.expires_at !== undefined) patch.expiresAt = input.expires_at;
    if (input.disabled !== undefined) patch.disabledAt = input.disabled ? now : null;
    sendJson(context, 200, redemptionCodeToJson(await change(context.params.id ?? '', patch), now));
  } },

  // DELETE disables: the row stays, so the list and the ledger keep telling what happened to every code.
  { method: 'DELETE', path: '/admin/redemption-codes/:id', handler: ({ storage, clock, change }) => async (context) => {
    const id = context.params.id ?? '';
    const now = clock.now();
    const existing = await storage.redemptionCodes.getById(id);
    if (existing === null) throw notFound('redemption code', id);
    // Disabling twice keeps the first time.
    const code = existing.disabledAt !== null && existing.redeemedAt === null ? existing : await change(id, { disabledAt: now });
    sendJson(context, 200, redemptionCodeToJson(code, now));
  } },

  { method: 'POST', path: '/admin/accounts/:id/redeem', handler: ({ services }) => async (context) => {
    const id = context.params.id ?? '';
    const input = parseInput(redeemSchema, await readAdminBody(context));
    const redeemed = await redeemCode(services, id, input.code);
    sendJson(context, 200, {
      object: 'redemption',
      account_id: id,
      code_id: redeemed.code.id,
      amount_usd: nanoToUsd(redeemed.code.amountNano),
      balance_usd: nanoToUsd(redeemed.balanceNano),
    });
  } },
]);
