import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { resolveSecretKey } from '../config/secret-key.js';

/** The prefix of a realtime client secret (OpenAI's ephemeral keys start `ek_` too). */
export const CLIENT_SECRET_PREFIX = 'ek_';
/** The most session configuration a secret carries (it travels in a WebSocket subprotocol header). */
export const MAX_SESSION_CONFIG_BYTES = 6 * 1024;

/** What a client secret grants: one API key's use of one model until it expires, with a session configuration. */
export interface ClientSecretGrant {
  /** The API key that created it: every limit, allowlist and fund of that key applies. */
  keyId: string;
  /** The public model id the secret is scoped to. */
  model: string;
  /** Clock milliseconds. */
  expiresAt: number;
  /** The session's id, as the creation answered it. */
  sessionId: string;
  /** The session configuration sent upstream (`session.update`) as the session opens; null: none. */
  session: Record<string, unknown> | null;
  /**
   * A limited secret (Gemini's ephemeral tokens): how many sessions it may open, only until `newSessionsUntil`, and
   * created at `createdAt` (clock milliseconds). Absent: any number of sessions until it expires.
   */
  sessions?: { uses: number; createdAt: number; newSessionsUntil: number };
  /** A Gemini Live `setup` (without its model) laid over the caller's own as a session opens on Google's path. */
  liveSetup?: Record<string, unknown>;
}

/** The HMAC key of client secrets, derived from SECRET_KEY (or the data directory's key) and used for nothing else. */
export function clientSecretKey(configured: string | null, dataDirectory: string): Buffer {
  return createHmac('sha256', resolveSecretKey(configured, dataDirectory).key).update('unigate realtime client secret v1').digest();
}

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

/**
 * A client secret: `ek_<payload>.<signature>`, the grant in base64url JSON signed with HMAC-SHA256. It is checked
 * without storage on any instance sharing SECRET_KEY; the key behind it is looked up as the session opens.
 */
export function mintClientSecret(key: Buffer, grant: ClientSecretGrant): string {
  const limited = grant.sessions === undefined ? {} : { u: grant.sessions.uses, c: grant.sessions.createdAt, ns: grant.sessions.newSessionsUntil };
  if (grant.liveSetup !== undefined) Object.assign(limited, { g: grant.liveSetup });
  const payload = Buffer.from(JSON.stringify({ k: grant.keyId, m: grant.model, e: grant.expiresAt, i: grant.sessionId, s: grant.session, ...limited, n: randomBytes(6).toString('base64url') })).toString('base64url');
  return `${CLIENT_SECRET_PREFIX}${payload}.${sign(key, payload)}`;
}

/** The grant of a client secret, or why it is refused: not one of ours (or tampered with), or expired. */
export function readClientSecret(key: Buffer, secret: string, now: number): ClientSecretGrant | 'invalid' | 'expired' {
  if (!secret.startsWith(CLIENT_SECRET_PREFIX)) return 'invalid';
  const [payload, signature, extra] = secret.slice(CLIENT_SECRET_PREFIX.length).split('.');
  if (payload === undefined || signature === undefined || extra !== undefined) return 'invalid';
  const expected = Buffer.from(sign(key, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
  let fields: { k?: unknown; m?: unknown; e?: unknown; i?: unknown; s?: unknown; u?: unknown; c?: unknown; ns?: unknown; g?: unknown };
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof fields;
  } catch {
    return 'invalid';
  }
  const { k, m, e, i, s, u, c, ns, g } = fields;
  if (typeof k !== 'string' || typeof m !== 'string' || typeof e !== 'number' || typeof i !== 'string' || (s !== null && (typeof s !== 'object' || Array.isArray(s)))) return 'invalid';
  if (e <= now) return 'expired';
  const grant: ClientSecretGrant = { keyId: k, model: m, expiresAt: e, sessionId: i, session: s as Record<string, unknown> | null };
  if (g !== undefined) {
    if (typeof g !== 'object' || g === null || Array.isArray(g)) return 'invalid';
    grant.liveSetup = g as Record<string, unknown>;
  }
  if (u === undefined) return grant;
  if (typeof u !== 'number' || typeof c !== 'number' || typeof ns !== 'number') return 'invalid';
  return { ...grant, sessions: { uses: u, createdAt: c, newSessionsUntil: ns } };
}
