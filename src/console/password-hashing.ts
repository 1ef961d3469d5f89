import argon2 from 'argon2';
import { verifyPassword as verifyScrypt } from '../auth/password-hash.js';

/**
 * argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane): tens of milliseconds per sign-in on one core,
 * which keeps a busy console responsive while making offline guessing expensive.
 */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashConsolePassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

/** argon2id hashes, and the scrypt hashes the admin API stores on accounts (migrated to argon2id at first sign-in). */
export async function verifyConsolePassword(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith('$argon2')) {
    try {
      return await argon2.verify(stored, password);
    } catch {
      return false;
    }
  }
  if (stored.startsWith('scrypt$')) return verifyScrypt(password, stored);
  return false;
}

/** A hash to verify against when no user matched, so an unknown email costs as much time as a wrong password. */
let decoy: Promise<string> | null = null;
export async function burnPasswordCheck(password: string): Promise<void> {
  decoy ??= argon2.hash('decoy password that matches nothing', ARGON2_OPTIONS);
  await verifyConsolePassword(password, await decoy);
}
