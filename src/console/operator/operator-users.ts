import { isUniqueViolation } from '../../http/admin/admin-guard.js';
import { newAccountRecord } from '../../management/account-input.js';
import { newId } from '../../shared/ids.js';
import type { ConsoleUser } from '../../storage/repositories/console-repository.js';
import type { OperatorRole } from '../../storage/repositories/operator-repository.js';
import type { Storage } from '../../storage/storage.js';

/**
 * Makes `email` an operator in `role`: an existing console user keeps their password and account; otherwise a new
 * user is made with `passwordHash` (email taken as verified: an operator or the admin token holder entered it) and
 * an account of their own, since every console session belongs to an account. Returns the user.
 */
export async function grantOperator(storage: Storage, input: { email: string; passwordHash: string; role: OperatorRole; createdBy: string | null; now: number }): Promise<{ user: ConsoleUser; created: boolean }> {
  const { now } = input;
  const email = input.email.trim().toLowerCase();
  let user = await storage.console.getUserByEmail(email);
  let created = false;
  if (user === null) {
    const existingAccount = await storage.accounts.getByEmail(email);
    const account = existingAccount ?? newAccountRecord(newId('acct', now), email, null, undefined, now);
    user = {
      id: newId('usr', now), email, passwordHash: input.passwordHash, emailVerifiedAt: now,
      totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: now, updatedAt: now,
    };
    try {
      if (existingAccount === null) await storage.accounts.create(account);
      await storage.console.createUser(user, { accountId: account.id, userId: user.id, role: 'owner', createdAt: now });
      created = true;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      user = await storage.console.getUserByEmail(email);
      if (user === null) throw error;
    }
  }
  await storage.operators.upsert({ userId: user.id, role: input.role, createdAt: now, createdBy: input.createdBy });
  return { user, created };
}
