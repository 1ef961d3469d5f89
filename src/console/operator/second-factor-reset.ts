import { z } from 'zod';
import type { ConsoleDeps } from '../console-deps.js';

/** Resetting a second factor needs a note of how the person's identity was checked; it goes to the audit log. */
export const identityCheckSchema = z.object({ identity_check: z.string().trim().min(10).max(1000) }).strict();

/** Removes the user's TOTP secret and backup codes and ends every session they have. */
export async function resetSecondFactor(deps: ConsoleDeps, userId: string): Promise<void> {
  const { storage, clock } = deps.services;
  await storage.console.disableTotp(userId, clock.now());
  await storage.console.deleteUserSessions(userId, null);
}
