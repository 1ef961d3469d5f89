import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The 32-byte key that encrypts upstream credentials at rest. SECRET_KEY (64 hex characters, or any passphrase,
 * hashed) wins; otherwise `<data dir>/secret.key` is read, or created with mode 0600 on first start. Instances
 * sharing one PostgreSQL database must share SECRET_KEY.
 */
export function resolveSecretKey(configured: string | null, dataDirectory: string): { key: Buffer; source: 'env' | 'file' | 'generated' } {
  if (configured !== null) {
    const key = /^[0-9a-fA-F]{64}$/.test(configured) ? Buffer.from(configured, 'hex') : createHash('sha256').update(configured).digest();
    return { key, source: 'env' };
  }
  const file = path.join(dataDirectory, 'secret.key');
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} does not hold a 64-character hex key`);
    return { key: Buffer.from(text, 'hex'), source: 'file' };
  }
  mkdirSync(dataDirectory, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return { key, source: 'generated' };
}
