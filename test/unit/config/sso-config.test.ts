/** The operators' OpenID Connect settings read from the environment (OIDC_*), validated once at start. */
import { describe, expect, it } from 'vitest';
import { readSsoConfig } from '../../../src/config/sso-config.js';

const reader = (env: Record<string, string>) => (name: string): string | undefined => env[name];

describe('OIDC_* settings', () => {
  it('are off without them, and need all three of issuer, client id and secret', () => {
    expect(readSsoConfig(reader({})).operator).toBeNull();
    expect(() => readSsoConfig(reader({ OIDC_ISSUER: 'https://sso.example.com', OIDC_CLIENT_ID: 'x' }))).toThrow(/go together/);
  });

  it('read the role claim, the role map and the default role, refusing roles that do not exist', () => {
    const config = readSsoConfig(reader({
      OIDC_ISSUER: 'https://sso.example.com/realms/acme', OIDC_CLIENT_ID: 'console', OIDC_CLIENT_SECRET: 's',
      OIDC_ROLE_CLAIM: 'groups', OIDC_ROLE_MAP: 'gateway-admins=admin; cn=owners,dc=example=owner', OIDC_DEFAULT_ROLE: 'viewer',
      OIDC_EMAIL_DOMAINS: 'Example.com, example.org',
    }));
    expect(config.operator).toMatchObject({
      issuer: 'https://sso.example.com/realms/acme', roleClaim: 'groups', defaultRole: 'viewer', emailDomains: ['example.com', 'example.org'],
      roleMap: { 'gateway-admins': 'admin', 'cn=owners,dc=example': 'owner' },
    });
    const base = { OIDC_ISSUER: 'https://sso.example.com', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's' };
    expect(() => readSsoConfig(reader({ ...base, OIDC_ROLE_MAP: 'x=superuser' }))).toThrow(/not an operator role/);
    expect(() => readSsoConfig(reader({ ...base, OIDC_DEFAULT_ROLE: 'developer' }))).toThrow(/not an operator role/);
    expect(() => readSsoConfig(reader({ ...base, OIDC_ISSUER: 'ftp://sso.example.com' }))).toThrow(/https URL/);
  });
});
