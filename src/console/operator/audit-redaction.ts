import { withoutUrlCredentials } from '../../shared/url-credentials.js';

/**
 * Field names whose values never reach the audit log: credentials, API keys and redemption codes in plaintext,
 * and upstream headers (they carry credentials). Matched case-insensitively on the whole name or its suffix.
 */
const SECRET_FIELD = /^(key|secret|secrets|api_?keys?|credentials?|password|new_password|current_password|token|admin_token|code|codes|authorization|headers|private_key|service_account(_json)?|client_secret)$|_(secret|token|password|key)$/i;

export const REDACTED = '[redacted]';

/** A deep copy of a JSON value with every secret field's value replaced by "[redacted]", and URLs without user and password. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 20) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
      out[name] = SECRET_FIELD.test(name) && item !== null ? REDACTED : redactSecrets(item, depth + 1);
    }
    return out;
  }
  return typeof value === 'string' ? withoutUrlCredentials(value) : value;
}

/** The redacted JSON text of a response body, or null when it is empty or not JSON. */
export function redactedJsonText(body: string | null): string | null {
  if (body === null || body === '') return null;
  try {
    return JSON.stringify(redactSecrets(JSON.parse(body)));
  } catch {
    return null;
  }
}
