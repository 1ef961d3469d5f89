import { hash, randomBytes } from 'node:crypto';

/** Key forms: `sk-<secret>` and `<brand>_sk_live_<secret>`. The secret is 40 base62 characters. */
export type ApiKeyForm = 'sk' | 'brand';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;

export interface IssuedApiKey {
  /** The full key, shown to its owner once and never stored. */
  plaintext: string;
  secretHash: string;
  displayHint: string;
}

/** 40 base62 characters from a CSPRNG, ~238 bits, with rejection sampling so every character is uniform. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Runs on every authenticated request: the one-shot digest costs about half of a Hash object's. */
export function hashApiKey(plaintext: string): string {
  return hash('sha256', plaintext, 'hex');
}

export function displayHint(plaintext: string): string {
  const prefix = plaintext.startsWith('sk-') ? 'sk-' : plaintext.slice(0, plaintext.indexOf('_sk_live_') + 9);
  return `${prefix}…${plaintext.slice(-4)}`;
}

export function issueApiKey(form: ApiKeyForm, brand: string): IssuedApiKey {
  const secret = randomBase62(SECRET_LENGTH);
  const plaintext = form === 'sk' ? `sk-${secret}` : `${brand}_sk_live_${secret}`;
  return { plaintext, secretHash: hashApiKey(plaintext), displayHint: displayHint(plaintext) };
}

/** Shape check before any lookup: a malformed key is refused without touching storage. */
export function isWellFormedApiKey(candidate: string, brand: string): boolean {
  if (candidate.length > 256) return false;
  const secret = candidate.startsWith('sk-')
    ? candidate.slice(3)
    : candidate.startsWith(`${brand}_sk_live_`)
      ? candidate.slice(brand.length + 9)
      : null;
  return secret !== null && /^[A-Za-z0-9_-]{20,200}$/.test(secret);
}
