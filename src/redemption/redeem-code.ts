import { MAX_BALANCE_NANO, nanoToUsd } from '../billing/money.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import type { NanoUsd } from '../domain/records.js';
import { BalanceLimitError } from '../storage/storage.js';
import type { RedemptionCode } from '../storage/repositories/redemption-repository.js';
import { parseRedemptionCode } from './redemption-code.js';

export interface RedeemedCode {
  code: RedemptionCode;
  /** The account's balance after the top-up, less charges not yet settled (what `balance_usd` shows everywhere). */
  balanceNano: NanoUsd;
}

/**
 * Redeems a typed code for an account: exactly once across every instance (one storage transaction claims the
 * code, writes the `topup` ledger entry and raises the balance), then drops this instance's cached balance.
 * Wrong, used, expired and disabled codes are GatewayErrors with their own codes; the code itself is never logged.
 */
export async function redeemCode(services: Pick<GatewayServices, 'storage' | 'ledger' | 'clock' | 'logger'>, accountId: string, typed: string): Promise<RedeemedCode> {
  const parsed = parseRedemptionCode(typed);
  if (parsed === null) throw new GatewayError('invalid_redemption_code', 'That is not a redemption code: check it and try again.', { param: 'code' });
  const now = services.clock.now();
  const outcome = await services.storage.redemptionCodes
    .redeem({ codeHash: parsed.codeHash, accountId, ledgerEntryId: newId('led', now), now, maxBalanceNano: MAX_BALANCE_NANO })
    .catch((error: unknown) => {
      if (!(error instanceof BalanceLimitError)) throw error;
      throw new GatewayError('bad_request', `This code would take the balance past the maximum of ${nanoToUsd(MAX_BALANCE_NANO)} USD; it was not redeemed.`, { param: 'code' });
    });
  if (!outcome.ok) {
    switch (outcome.reason) {
      case 'no_account':
        throw new GatewayError('not_found', `No account with id '${accountId}'.`);
      case 'not_found':
        throw new GatewayError('redemption_code_not_found', 'No such redemption code.', { param: 'code' });
      case 'redeemed':
        throw new GatewayError('redemption_code_redeemed', 'This redemption code has already been redeemed.', { param: 'code' });
      case 'expired':
        throw new GatewayError('redemption_code_expired', 'This redemption code has expired.', { param: 'code' });
      case 'disabled':
        throw new GatewayError('redemption_code_disabled', 'This redemption code has been disabled.', { param: 'code' });
      default: {
        const unknown: never = outcome;
        throw new TypeError(`unknown redemption outcome ${JSON.stringify(unknown)}`);
      }
    }
  }
  services.ledger.forgetBalance(accountId);
  services.logger.info('redemption code redeemed', { codeId: outcome.code.id, accountId, amountNano: outcome.code.amountNano.toString() });
  return { code: outcome.code, balanceNano: await services.ledger.availableBalance(accountId) };
}
