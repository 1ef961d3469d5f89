import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Storage } from '../storage/storage.js';

const SETTING = 'admin_token_sha256';

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

export function generateAdminToken(): string {
  return `adm_${randomBytes(32).toString('base64url')}`;
}

/** Checks admin bearer tokens against one SHA-256 digest, in constant time. */
export class AdminTokenVerifier {
  constructor(private readonly digest: Buffer) {}

  static fromPlaintext(token: string): AdminTokenVerifier {
    return new AdminTokenVerifier(sha256(token));
  }

  verify(candidate: string | null): boolean {
    if (candidate === null) return false;
    return timingSafeEqual(sha256(candidate), this.digest);
  }

}

export interface ResolvedAdminToken {
  verifier: AdminTokenVerifier;
  /** Set only when a token was generated now and must be printed once. */
  generated: string | null;
}

/** ADMIN_TOKEN when configured; otherwise the stored hash; otherwise a new token, stored hashed and returned once. */
export async function resolveAdminToken(storage: Storage, configured: string | null, now: number): Promise<ResolvedAdminToken> {
  if (configured !== null) return { verifier: AdminTokenVerifier.fromPlaintext(configured), generated: null };
  const stored = await storage.settings.get(SETTING);
  if (stored !== null) return { verifier: new AdminTokenVerifier(Buffer.from(stored, 'hex')), generated: null };
  return rotateAdminToken(storage, now);
}

export async function rotateAdminToken(storage: Storage, now: number): Promise<ResolvedAdminToken> {
  const token = generateAdminToken();
  await storage.settings.set(SETTING, sha256(token).toString('hex'), now);
  return { verifier: AdminTokenVerifier.fromPlaintext(token), generated: token };
}

