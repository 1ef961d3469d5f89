import { createHash, randomBytes } from 'node:crypto';

/**
 * Redemption codes such as `UNIGATE-7K2QF-0M9XA-ZT4HC-W1PRB-3NDEV`: five groups of five Crockford base32 characters from the CSPRNG
 * (125 bits) after a recognisable prefix (the key brand in capitals, e.g. `UNIGATE`). People type these, so reading
 * is forgiving: case, spaces and hyphens do not matter, and O/I/L read as 0/1/1. Only the SHA-256 of the 25-character
 * body is stored, so the prefix is cosmetic and a brand change does not invalidate old codes.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const CODE_BODY_LENGTH = 25;
const GROUP = 5;

export interface IssuedRedemptionCode {
  /** The code as handed to a person: shown once, never stored. */
  plaintext: string;
  codeHash: string;
  hint: string;
}

export function hashRedemptionCode(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

function codeHint(prefix: string, body: string): string {
  return `${prefix}-…${body.slice(-4)}`;
}

/** 32 symbols = 5 bits per byte masked: every character uniform, no rejection needed. */
function randomBody(): string {
  let body = '';
  for (const byte of randomBytes(CODE_BODY_LENGTH)) body += ALPHABET[byte & 31];
  return body;
}

export function issueRedemptionCode(brand: string): IssuedRedemptionCode {
  const prefix = brand.toUpperCase();
  const body = randomBody();
  const groups: string[] = [];
  for (let start = 0; start < body.length; start += GROUP) groups.push(body.slice(start, start + GROUP));
  return { plaintext: `${prefix}-${groups.join('-')}`, codeHash: hashRedemptionCode(body), hint: codeHint(prefix, body) };
}

/**
 * The canonical body of a typed code, or null when it cannot be one (checked before any lookup). The last 25
 * symbols after removing spaces and hyphens are the body; anything before them must be a letters-and-digits prefix.
 */
export function parseRedemptionCode(input: string): { body: string; codeHash: string } | null {
  if (input.length > 100) return null;
  const compact = input.replace(/[\s-]+/g, '').toUpperCase();
  if (compact.length < CODE_BODY_LENGTH) return null;
  const prefix = compact.slice(0, compact.length - CODE_BODY_LENGTH);
  if (!/^[A-Z0-9]{0,32}$/.test(prefix)) return null;
  const body = compact.slice(compact.length - CODE_BODY_LENGTH).replace(/O/g, '0').replace(/[IL]/g, '1');
  for (const symbol of body) if (!ALPHABET.includes(symbol)) return null;
  return { body, codeHash: hashRedemptionCode(body) };
}
