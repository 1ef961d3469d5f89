import { consoleRoutes } from '../console-route-table.js';
import { ssoClientsOf } from './sso-connections.js';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { isoTime } from '../../management/time-input.js';
import { parseInput } from '../../management/parse-input.js';
import { isProjectGrant } from '../../projects/directory-projects.js';
import { newId } from '../../shared/ids.js';
import { ProviderError } from '../../sso/provider-http.js';
import { OPERATOR_ROLES } from '../../storage/repositories/operator-repository.js';
import { OPERATOR_OWNER, SsoDomainTakenError, type SsoConnection } from '../../storage/repositories/sso-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { recordAudit } from '../operator/audit-log.js';
import { hashToken, newSecretToken } from '../secret-token.js';
import { OPERATOR_ENV_CONNECTION_ID, operatorConnection } from './sso-connections.js';
import { SSO_ACCOUNT_ROLES } from './sso-identity.js';
import { ssoRedirectUri } from './sso-sign-in-routes.js';
import type { AccountSsoJson, OperatorSsoJson, SavedSsoJson, SsoConnectionJson } from '../../contract/sso.js';

/** Free mail domains: no account may claim them (they are everyone's, not an organisation's). */
const SHARED_MAIL_DOMAINS = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'ymail.com', 'icloud.com', 'me.com',
  'mac.com', 'aol.com', 'proton.me', 'protonmail.com', 'pm.me', 'gmx.com', 'gmx.de', 'gmx.net', 'web.de', 'mail.com', 'mail.ru', 'yandex.ru',
  'yandex.com', 'qq.com', '163.com', '126.com', 'zoho.com', 'fastmail.com', 'tutanota.com', 'hey.com',
]);
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/;

const issuer = z.url().max(2000);
const claimName = z.string().trim().min(1).max(100).regex(/^[A-Za-z0-9_:./-]+$/, 'a claim name');
const baseShape = {
  issuer,
  client_id: z.string().trim().min(1).max(400),
  client_secret: z.string().min(1).max(1000).optional(),
  role_claim: claimName.nullable().default(null),
  enabled: z.boolean().default(true),
};
const accountSchema = z.object({
  ...baseShape,
  email_domains: z.array(z.string().trim().toLowerCase().regex(DOMAIN, 'a domain such as example.com')).min(1).max(20),
  require_sso: z.boolean().default(false),
  jit_role: z.enum(SSO_ACCOUNT_ROLES as [string, ...string[]]).nullable().default(null),
  // A group maps to an account role, or to a project membership: `project:<id or name>[:developer|viewer]`.
  role_map: z.record(z.string().min(1).max(200), z.union([
    z.enum(SSO_ACCOUNT_ROLES as [string, ...string[]]),
    z.string().max(260).refine(isProjectGrant, 'an account role, or project:<id or name>[:developer|viewer]'),
  ])).default({}),
}).strict();
const operatorSchema = z.object({
  ...baseShape,
  email_domains: z.array(z.string().trim().toLowerCase().regex(DOMAIN, 'a domain such as example.com')).max(20).default([]),
  jit_role: z.enum(OPERATOR_ROLES as unknown as [string, ...string[]]).nullable().default(null),
  role_map: z.record(z.string().min(1).max(200), z.enum(OPERATOR_ROLES as unknown as [string, ...string[]])).default({}),
}).strict();

/** A connection as the console shows it: never its client secret. */
export function connectionJson(connection: SsoConnection): SsoConnectionJson {
  return {
    id: connection.id,
    issuer: connection.issuer,
    client_id: connection.clientId,
    client_secret_set: true,
    email_domains: connection.emailDomains,
    require_sso: connection.requireSso,
    jit_role: connection.jitRole,
    role_claim: connection.roleClaim,
    role_map: connection.roleMap,
    enabled: connection.enabled,
    scim_enabled: connection.scimEnabled,
    updated_at: connection.updatedAt === 0 ? null : isoTime(connection.updatedAt),
  };
}

/** The account's and the operators' single sign-on settings, and the account's SCIM token. */
export const SSO_SETTINGS_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const clients = ssoClientsOf(deps);
  const { storage, clock } = deps.services;

  /** Checks the provider answers as OpenID Connect before anything is saved (the issuer is fetched now). */
  const checkProvider = async (client: typeof clients.account, issuerUrl: string): Promise<void> => {
    try {
      await client.metadata(issuerUrl);
    } catch (error) {
      if (error instanceof ProviderError) throw new GatewayError('bad_request', `The issuer does not answer as an OpenID Connect provider: ${error.message}`, { param: 'issuer' });
      throw error;
    }
  };

  return { deps, clients, storage, clock, checkProvider };
}, [
  { method: 'GET', path: '/api/sso', who: 'member', permission: 'members:read', handler: ({ deps, storage }) => async ({ context, active }) => {
    const connection = await storage.sso.getConnectionByOwner(active.session.accountId);
    const answer: AccountSsoJson = {
      connection: connection === null ? null : connectionJson(connection),
      redirect_uri: ssoRedirectUri(deps),
      scim_base_url: `${deps.urls.apiPublic()}/scim/v2`,
    };
    sendJson(context, 200, answer);
  } },

  { method: 'PUT', path: '/api/sso', who: 'member', permission: 'members:write', handler: ({ clients, storage, clock, checkProvider }) => async ({ context, active }) => {
    const input = parseInput(accountSchema, await readConsoleBody(context));
    const accountId = active.session.accountId;
    const shared = input.email_domains.find((domain) => SHARED_MAIL_DOMAINS.has(domain));
    if (shared !== undefined) throw new GatewayError('bad_request', `${shared} is a shared mail domain; an account can only claim its own organisation's domain.`, { param: 'email_domains' });
    const existing = await storage.sso.getConnectionByOwner(accountId);
    if (existing === null && input.client_secret === undefined) throw new GatewayError('bad_request', 'client_secret is required when single sign-on is first set up.', { param: 'client_secret' });
    await checkProvider(clients.account, input.issuer);
    try {
      const saved = await storage.sso.saveConnection({
        id: newId('sso', clock.now()), owner: accountId, issuer: input.issuer, clientId: input.client_id, clientSecret: input.client_secret ?? null,
        emailDomains: [...new Set(input.email_domains)], requireSso: input.require_sso, jitRole: input.jit_role, roleClaim: input.role_claim,
        roleMap: input.role_map, enabled: input.enabled,
      }, clock.now());
      sendJson(context, 200, { connection: connectionJson(saved) } satisfies SavedSsoJson);
    } catch (error) {
      if (error instanceof SsoDomainTakenError) throw new GatewayError('conflict', error.message, { param: 'email_domains' });
      throw error;
    }
  } },

  { method: 'DELETE', path: '/api/sso', who: 'member', permission: 'members:write', handler: ({ storage }) => async ({ context, active }) => {
    if (!(await storage.sso.deleteConnection(active.session.accountId))) throw new GatewayError('not_found', 'This account has no single sign-on.');
    sendNoContent(context);
  } },

  // The SCIM bearer token: shown once; only its hash is kept. A new one replaces the old at once.
  { method: 'POST', path: '/api/sso/scim-token', who: 'member', permission: 'members:write', handler: ({ deps, storage, clock }) => async ({ context, active }) => {
    const token = `scim_${newSecretToken()}`;
    if (!(await storage.sso.setScimTokenHash(active.session.accountId, hashToken(token), clock.now()))) {
      throw new GatewayError('conflict', 'Set up single sign-on first: SCIM provisions people who then sign in through it.');
    }
    sendJson(context, 201, { token, scim_base_url: `${deps.urls.apiPublic()}/scim/v2` });
  } },

  { method: 'DELETE', path: '/api/sso/scim-token', who: 'member', permission: 'members:write', handler: ({ storage, clock }) => async ({ context, active }) => {
    if (!(await storage.sso.setScimTokenHash(active.session.accountId, null, clock.now()))) throw new GatewayError('not_found', 'This account has no single sign-on.');
    sendNoContent(context);
  } },

  { method: 'GET', path: '/api/operator/sso', who: 'operator', permission: 'read', handler: ({ deps }) => async ({ context }) => {
    const connection = await operatorConnection(deps.services);
    const answer: OperatorSsoJson = {
      source: connection === null ? null : connection.id === OPERATOR_ENV_CONNECTION_ID ? 'environment' : 'console',
      connection: connection === null ? null : connectionJson(connection),
      redirect_uri: ssoRedirectUri(deps),
    };
    sendJson(context, 200, answer);
  } },

  { method: 'PUT', path: '/api/operator/sso', who: 'operator', permission: 'operators:manage', handler: ({ deps, clients, storage, clock, checkProvider }) => async ({ context, active }) => {
    if (deps.services.config.sso.operator !== null) throw new GatewayError('conflict', 'Operators\' single sign-on is set by OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET; change it there.');
    const input = parseInput(operatorSchema, await readConsoleBody(context));
    const existing = await storage.sso.getConnectionByOwner(OPERATOR_OWNER);
    if (existing === null && input.client_secret === undefined) throw new GatewayError('bad_request', 'client_secret is required when single sign-on is first set up.', { param: 'client_secret' });
    await checkProvider(clients.operator, input.issuer);
    const saved = await storage.sso.saveConnection({
      id: newId('sso', clock.now()), owner: OPERATOR_OWNER, issuer: input.issuer, clientId: input.client_id, clientSecret: input.client_secret ?? null,
      // The operators' domains only limit who signs in; they claim nothing for accounts' sign-in by email.
      emailDomains: [...new Set(input.email_domains)], requireSso: false, jitRole: input.jit_role, roleClaim: input.role_claim, roleMap: input.role_map, enabled: input.enabled,
    }, clock.now());
    await recordAudit(deps, {
      operatorId: active.user.id, operatorEmail: active.user.email, action: 'set operators\' single sign-on', target: `sso:${saved.id}`, status: 200,
      before: existing === null ? null : connectionJson(existing), after: connectionJson(saved), ip: context.clientIp,
    });
    sendJson(context, 200, { connection: connectionJson(saved) } satisfies SavedSsoJson);
  } },

  { method: 'DELETE', path: '/api/operator/sso', who: 'operator', permission: 'operators:manage', handler: ({ deps, storage }) => async ({ context, active }) => {
    if (deps.services.config.sso.operator !== null) throw new GatewayError('conflict', 'Operators\' single sign-on is set by the OIDC_* settings; remove them there.');
    const existing = await storage.sso.getConnectionByOwner(OPERATOR_OWNER);
    if (existing === null || !(await storage.sso.deleteConnection(OPERATOR_OWNER))) throw new GatewayError('not_found', 'Operators have no single sign-on.');
    await recordAudit(deps, {
      operatorId: active.user.id, operatorEmail: active.user.email, action: 'remove operators\' single sign-on', target: `sso:${existing.id}`, status: 204,
      before: connectionJson(existing), after: null, ip: context.clientIp,
    });
    sendNoContent(context);
  } },
]);
