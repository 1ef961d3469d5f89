import { booleanSetting, SettingError } from './settings.js';
/** The operators' OpenID Connect client when set in the environment (docs/single-sign-on.md). */
export interface OperatorOidcConfig {
  /** OIDC_ISSUER: the provider's issuer URL, exactly as its discovery document names it. */
  issuer: string;
  /** OIDC_CLIENT_ID */
  clientId: string;
  /** OIDC_CLIENT_SECRET */
  clientSecret: string;
  /** OIDC_ROLE_CLAIM: the ID token claim read for OIDC_ROLE_MAP (e.g. `groups`, `roles`); null: none. */
  roleClaim: string | null;
  /** OIDC_ROLE_MAP: claim value → operator role (`gateway-admins=admin,gateway-owners=owner`; `;` between entries whose values hold commas). */
  roleMap: Record<string, string>;
  /** OIDC_DEFAULT_ROLE: operator role of a person no claim value maps; null: they are refused. */
  defaultRole: string | null;
  /** OIDC_EMAIL_DOMAINS: only verified emails in these domains sign in (empty: any). */
  emailDomains: string[];
}

export interface SsoConfig {
  /** The operators' client from the environment; null: none, or the one set in the operator console. */
  operator: OperatorOidcConfig | null;
  /** Providers may be reached over http on the loopback (OIDC_ALLOW_HTTP_LOOPBACK; tests and local providers). */
  allowHttpLoopback: boolean;
  /** Accounts' providers may be on private, loopback and link-local addresses (SSO_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateAddresses: boolean;
}

export class SsoConfigError extends SettingError {
  override name = 'SsoConfigError';
}

const OPERATOR_ROLES = ['owner', 'admin', 'support', 'viewer'];

function readRole(raw: string, name: string): string {
  if (!OPERATOR_ROLES.includes(raw)) throw new SsoConfigError(`${name}: "${raw}" is not an operator role (${OPERATOR_ROLES.join(', ')})`);
  return raw;
}

/**
 * `value=role,value2=role` → { value: role, value2: role }. Values holding commas (LDAP DNs) separate entries with
 * `;` instead: when the text has a `;`, entries are split on it alone.
 */
function readRoleMap(raw: string | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  if (raw === undefined) return map;
  for (const entry of raw.split(raw.includes(';') ? ';' : ',').map((part) => part.trim()).filter(Boolean)) {
    const equals = entry.lastIndexOf('=');
    if (equals <= 0) throw new SsoConfigError(`OIDC_ROLE_MAP entries are value=role, got "${entry}"`);
    map[entry.slice(0, equals).trim()] = readRole(entry.slice(equals + 1).trim(), 'OIDC_ROLE_MAP');
  }
  return map;
}

export function readSsoConfig(read: (name: string) => string | undefined): SsoConfig {
  const issuer = read('OIDC_ISSUER');
  const clientId = read('OIDC_CLIENT_ID');
  const clientSecret = read('OIDC_CLIENT_SECRET');
  const given = [issuer, clientId, clientSecret].filter((value) => value !== undefined).length;
  if (given !== 0 && given !== 3) throw new SsoConfigError('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together: set all three or none');
  let operator: OperatorOidcConfig | null = null;
  if (issuer !== undefined && clientId !== undefined && clientSecret !== undefined) {
    try {
      const url = new URL(issuer);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
    } catch {
      throw new SsoConfigError(`OIDC_ISSUER must be an https URL, got "${issuer}"`);
    }
    const defaultRole = read('OIDC_DEFAULT_ROLE');
    operator = {
      issuer, clientId, clientSecret,
      roleClaim: read('OIDC_ROLE_CLAIM') ?? null,
      roleMap: readRoleMap(read('OIDC_ROLE_MAP')),
      defaultRole: defaultRole === undefined ? null : readRole(defaultRole, 'OIDC_DEFAULT_ROLE'),
      emailDomains: (read('OIDC_EMAIL_DOMAINS') ?? '').split(',').map((domain) => domain.trim().toLowerCase()).filter(Boolean),
    };
  }
  return { operator, allowHttpLoopback: booleanSetting(read, 'OIDC_ALLOW_HTTP_LOOPBACK'), allowPrivateAddresses: booleanSetting(read, 'SSO_ALLOW_PRIVATE_ADDRESSES') };
}
