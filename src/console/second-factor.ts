import type { ConsoleUser } from '../storage/repositories/console-repository.js';
import { hashBackupCode, normalizeBackupCode } from './backup-codes.js';
import type { ConsoleDeps } from './console-deps.js';
import { matchTotpStep } from './totp.js';

/**
 * Checks a second-factor code of a user with two-factor on: a TOTP code of the current step (±1) not accepted
 * before, or (when `allowBackup`) an unused backup code, which is used up.
 */
export async function acceptSecondFactor(deps: ConsoleDeps, user: ConsoleUser, code: string, allowBackup: boolean): Promise<boolean> {
  const { storage, clock } = deps.services;
  const now = clock.now();
  const trimmed = code.replace(/\s/g, '');
  if (user.totpSecret !== null && /^\d{6}$/.test(trimmed)) {
    const step = matchTotpStep(user.totpSecret, trimmed, now);
    return step !== null && storage.console.claimTotpStep(user.id, step);
  }
  if (!allowBackup) return false;
  const backup = normalizeBackupCode(code);
  return backup !== null && storage.console.useBackupCode(user.id, hashBackupCode(backup), now);
}
