import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, base64url: session cookies, CSRF tokens and the one-time tokens of mailed links. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What storage keeps of a token: its SHA-256, lowercase hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time comparison of two strings (false for different lengths). */
export function sameSecret(left: string, right: string): boolean {
  const a = Buffer.from(left, 'utf8');
  const b = Buffer.from(right, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
