import { randomInt } from 'node:crypto';
import { hashToken } from './secret-token.js';

export const BACKUP_CODE_COUNT = 10;
/** Crockford-style base32 without look-alikes (no 0/O, 1/I/L, U). */
const ALPHABET = '23456789abcdefghjkmnpqrstvwxyz';

/** Ten codes of 10 random characters (~49 bits each), shown in two groups of five such as `k3m9p-7qx2w`. */
export function newBackupCodes(): string[] {
  return Array.from({ length: BACKUP_CODE_COUNT }, () => {
    let code = '';
    for (let index = 0; index < 10; index += 1) code += ALPHABET[randomInt(ALPHABET.length)];
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** Case, spaces and dashes do not matter when a code is typed back. */
export function normalizeBackupCode(input: string): string | null {
  const compact = input.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z0-9]{10}$/.test(compact) ? compact : null;
}

export function hashBackupCode(normalized: string): string {
  return hashToken(`backup:${normalized}`);
}
