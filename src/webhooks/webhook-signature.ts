import { createHmac, randomBytes } from 'node:crypto';

/** The prefix of a Standard Webhooks secret: `whsec_` then the key in base64. */
const SECRET_PREFIX = 'whsec_';

/** A fresh signing secret: 32 random bytes, `whsec_<base64>`. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret,
 * separated by spaces (during a rotation both the new and the old secret sign, so either verifies).
 */
export function webhookSignature(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(signed).digest('base64')}`).join(' ');
}
