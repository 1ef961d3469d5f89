import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Time-sortable id: `<prefix>_<10 chars of ms time in base36, zero-padded><12 random base36 chars>`. */
export function newId(prefix: string, now: number = Date.now()): string {
  const time = now.toString(36).padStart(10, '0');
  const bytes = randomBytes(12);
  let random = '';
  for (const byte of bytes) random += ALPHABET[byte % 36];
  return `${prefix}_${time}${random}`;
}
