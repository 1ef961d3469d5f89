import { sharedScope } from '../../http/route-table.js';
import type { ConsoleDeps } from '../console-deps.js';
import type { GatewayServices } from '../../services.js';
import { OidcClient } from '../../sso/oidc-client.js';
import { ProviderHttp } from '../../sso/provider-http.js';
import { OPERATOR_OWNER, type SsoConnection } from '../../storage/repositories/sso-repository.js';

/** The id the operators' connection from the environment (OIDC_*) has: its identities are kept under it. */
export const OPERATOR_ENV_CONNECTION_ID = 'sso_operator_env';

/**
 * The OpenID Connect clients of the console: one for the operators' provider (trusted like the rest of the
 * deployment's configuration: any address) and one for accounts' providers (public addresses only unless the operator
 * allows private ones). Each caches discovery documents and key sets.
 */
export interface SsoClients {
  operator: OidcClient;
  account: OidcClient;
  close(): Promise<void>;
}

export function createSsoClients(services: GatewayServices): SsoClients {
  const { sso } = services.config;
  const operatorHttp = new ProviderHttp({ allowHttpLoopback: sso.allowHttpLoopback, allowPrivateAddresses: true });
  const accountHttp = new ProviderHttp({ allowHttpLoopback: sso.allowHttpLoopback, allowPrivateAddresses: sso.allowPrivateAddresses });
  return {
    operator: new OidcClient(operatorHttp, services.clock),
    account: new OidcClient(accountHttp, services.clock),
    close: async () => {
      await Promise.all([operatorHttp.close(), accountHttp.close()]);
    },
  };
}

/** The operators' connection: the environment's (OIDC_*) when set, else the one saved in the operator console. */
export async function operatorConnection(services: GatewayServices): Promise<SsoConnection | null> {
  const fromEnv = services.config.sso.operator;
  if (fromEnv !== null) {
    return {
      id: OPERATOR_ENV_CONNECTION_ID, owner: OPERATOR_OWNER, issuer: fromEnv.issuer, clientId: fromEnv.clientId, clientSecret: fromEnv.clientSecret,
      emailDomains: fromEnv.emailDomains, requireSso: false, jitRole: fromEnv.defaultRole, roleClaim: fromEnv.roleClaim, roleMap: fromEnv.roleMap,
      enabled: true, scimEnabled: false, createdAt: 0, updatedAt: 0,
    };
  }
  return services.storage.sso.getConnectionByOwner(OPERATOR_OWNER);
}

/** Any connection by id (the environment's operator connection included). */
export async function connectionById(services: GatewayServices, id: string): Promise<SsoConnection | null> {
  if (id === OPERATOR_ENV_CONNECTION_ID) return operatorConnection(services);
  return services.storage.sso.getConnection(id);
}

export function isOperatorConnection(connection: SsoConnection): boolean {
  return connection.owner === OPERATOR_OWNER;
}

/** The domain part of an email address, lowercase. */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** A role claim's values: a string is one value, an array its strings; anything else none. */
export function claimValues(claim: unknown): string[] {
  return typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim.filter((value): value is string => typeof value === 'string') : [];
}

/**
 * The highest of the roles the claim's values map to (a claim is a string or an array of strings), in `ranking`'s
 * order (first is highest); null when none maps.
 */
export function mappedRole<T extends string>(claim: unknown, roleMap: Record<string, string>, ranking: readonly T[]): T | null {
  let best: T | null = null;
  for (const value of claimValues(claim)) {
    const role = roleMap[value];
    const rank = ranking.indexOf(role as T);
    if (rank >= 0 && (best === null || rank < ranking.indexOf(best))) best = ranking[rank] as T;
  }
  return best;
}

/** The console's SSO clients, made once per console (their provider metadata and key caches are shared by its routes). */
export const ssoClientsOf = sharedScope((deps: ConsoleDeps) => createSsoClients(deps.services));
