import type { Kysely, Selectable } from 'kysely';
import type { SecretBox } from '../../shared/secret-box.js';
import { fromBoolean, parseStringArray, parseStringRecord, toBoolean, toJson, toNullableNumber, toNumber } from '../convert.js';
import type { SsoConnectionsTable, SsoDatabase } from '../sso-schema.js';

/** The owner of the operators' connection; every other connection is owned by an account (its id). */
export const OPERATOR_OWNER = 'operator';

/** One OpenID Connect client: the operators' or an account's. */
export interface SsoConnection {
  id: string;
  /** `operator`, or the account id. */
  owner: string;
  issuer: string;
  clientId: string;
  /** Opened from its sealed form. */
  clientSecret: string;
  /**
   * Lowercase email domains the connection answers for: an account's sign-in by email finds it through them, and a
   * domain belongs to one account at most. The operators' connection keeps its own list, which only limits who signs in.
   */
  emailDomains: string[];
  /** Members whose email is in `emailDomains` must sign in through the connection (their password is refused). */
  requireSso: boolean;
  /** The role a person gets on first sign-in when no claim maps to one; null: only people already known sign in. */
  jitRole: string | null;
  /** The ID token claim (a string or an array of strings) read for `roleMap`; null: none. */
  roleClaim: string | null;
  /** Claim value (or SCIM group name) → role. */
  roleMap: Record<string, string>;
  enabled: boolean;
  /** Whether a SCIM token is set. */
  scimEnabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A connection as saved: `clientSecret` null keeps the stored one. */
export type SsoConnectionInput = Omit<SsoConnection, 'clientSecret' | 'scimEnabled' | 'createdAt' | 'updatedAt'> & { clientSecret: string | null };

/** A sign-in under way, bound to one browser and used once. */
export interface SsoLogin {
  stateHash: string;
  connectionId: string;
  browserHash: string;
  nonce: string;
  /** The PKCE code verifier (sealed at rest). */
  verifier: string;
  /** Console path to land on after sign-in. */
  returnTo: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

/** A domain another connection already answers for. */
export class SsoDomainTakenError extends Error {
  override name = 'SsoDomainTakenError';
  constructor(readonly domain: string) {
    super(`The domain ${domain} belongs to another account's single sign-on.`);
  }
}

export interface SsoRepository {
  getConnection(id: string): Promise<SsoConnection | null>;
  getConnectionByOwner(owner: string): Promise<SsoConnection | null>;
  /** The connection that answers for an email domain (lowercase), if any. */
  getConnectionByDomain(domain: string): Promise<SsoConnection | null>;
  getConnectionByScimTokenHash(tokenHash: string): Promise<SsoConnection | null>;
  /**
   * Creates or replaces the owner's connection and its domains in one transaction; throws SsoDomainTakenError when a
   * domain belongs to another connection. Returns the saved connection.
   */
  saveConnection(input: SsoConnectionInput, now: number): Promise<SsoConnection>;
  /** Deletes the owner's connection, its domains, identities and SCIM token. */
  deleteConnection(owner: string): Promise<boolean>;
  setScimTokenHash(owner: string, tokenHash: string | null, now: number): Promise<boolean>;

  /** The console user a provider's subject is on this connection. */
  getIdentity(connectionId: string, subject: string): Promise<string | null>;
  /** Binds the subject to the user; false when the subject or the user is bound to someone else already. */
  bindIdentity(connectionId: string, subject: string, userId: string, now: number): Promise<boolean>;
  touchIdentity(connectionId: string, subject: string, now: number): Promise<void>;

  createLogin(login: SsoLogin): Promise<void>;
  /** Marks the live, unused login of this state used and returns it; null when unknown, used or expired. */
  consumeLogin(stateHash: string, now: number): Promise<SsoLogin | null>;
  /** Drops logins that expired before `before`. */
  deleteExpiredLogins(before: number): Promise<void>;
}

export function createSsoRepository(db: Kysely<SsoDatabase>, secretBox: SecretBox): SsoRepository {
  const toConnection = async (row: Selectable<SsoConnectionsTable>, executor: Kysely<SsoDatabase> = db): Promise<SsoConnection> => {
    const domains = row.owner === OPERATOR_OWNER
      ? parseStringArray(row.operator_domains, 'operator sso domains').map((domain) => ({ domain }))
      : await executor.selectFrom('sso_domains').select('domain').where('connection_id', '=', row.id).orderBy('domain').execute();
    return {
      id: row.id,
      owner: row.owner,
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecret: secretBox.open(row.client_secret_sealed),
      emailDomains: domains.map((domain) => domain.domain),
      requireSso: toBoolean(row.require_sso),
      jitRole: row.jit_role,
      roleClaim: row.role_claim,
      roleMap: parseStringRecord(row.role_map, 'sso role map'),
      enabled: toBoolean(row.enabled),
      scimEnabled: row.scim_token_hash !== null,
      createdAt: toNumber(row.created_at),
      updatedAt: toNumber(row.updated_at),
    };
  };
  const byColumn = async (column: 'id' | 'owner' | 'scim_token_hash', value: string): Promise<SsoConnection | null> => {
    const row = await db.selectFrom('sso_connections').selectAll().where(column, '=', value).executeTakeFirst();
    return row === undefined ? null : toConnection(row);
  };
  const toLogin = (row: Selectable<SsoDatabase['sso_logins']>): SsoLogin => ({
    stateHash: row.state_hash,
    connectionId: row.connection_id,
    browserHash: row.browser_hash,
    nonce: row.nonce,
    verifier: secretBox.open(row.verifier_sealed),
    returnTo: row.return_to,
    createdAt: toNumber(row.created_at),
    expiresAt: toNumber(row.expires_at),
    usedAt: toNullableNumber(row.used_at),
  });

  return {
    getConnection: (id) => byColumn('id', id),
    getConnectionByOwner: (owner) => byColumn('owner', owner),
    getConnectionByScimTokenHash: (tokenHash) => byColumn('scim_token_hash', tokenHash),

    async getConnectionByDomain(domain) {
      const row = await db.selectFrom('sso_domains').innerJoin('sso_connections', 'sso_connections.id', 'sso_domains.connection_id')
        .selectAll('sso_connections').where('sso_domains.domain', '=', domain).executeTakeFirst();
      return row === undefined ? null : toConnection(row);
    },

    async saveConnection(input, now) {
      return db.transaction().execute(async (trx) => {
        const existing = await trx.selectFrom('sso_connections').selectAll().where('owner', '=', input.owner).executeTakeFirst();
        const values = {
          issuer: input.issuer,
          client_id: input.clientId,
          require_sso: fromBoolean(input.requireSso),
          jit_role: input.jitRole,
          role_claim: input.roleClaim,
          role_map: toJson(input.roleMap),
          operator_domains: toJson(input.owner === OPERATOR_OWNER ? input.emailDomains : []),
          enabled: fromBoolean(input.enabled),
          updated_at: now,
        };
        let id: string;
        if (existing === undefined) {
          if (input.clientSecret === null) throw new Error('a new single sign-on connection needs its client secret');
          id = input.id;
          await trx.insertInto('sso_connections').values({
            id, owner: input.owner, ...values, client_secret_sealed: secretBox.seal(input.clientSecret), scim_token_hash: null, created_at: now,
          }).execute();
        } else {
          id = existing.id;
          await trx.updateTable('sso_connections').set({
            ...values, ...(input.clientSecret === null ? {} : { client_secret_sealed: secretBox.seal(input.clientSecret) }),
          }).where('id', '=', id).execute();
        }
        await trx.deleteFrom('sso_domains').where('connection_id', '=', id).execute();
        for (const domain of input.owner === OPERATOR_OWNER ? [] : input.emailDomains) {
          const holder = await trx.selectFrom('sso_domains').select('connection_id').where('domain', '=', domain).executeTakeFirst();
          if (holder !== undefined) throw new SsoDomainTakenError(domain);
          await trx.insertInto('sso_domains').values({ domain, connection_id: id, created_at: now }).execute();
        }
        const row = await trx.selectFrom('sso_connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        return toConnection(row, trx);
      });
    },

    async deleteConnection(owner) {
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('sso_connections').select('id').where('owner', '=', owner).executeTakeFirst();
        if (row === undefined) return false;
        await trx.deleteFrom('sso_domains').where('connection_id', '=', row.id).execute();
        await trx.deleteFrom('sso_identities').where('connection_id', '=', row.id).execute();
        await trx.deleteFrom('sso_logins').where('connection_id', '=', row.id).execute();
        await trx.deleteFrom('sso_connections').where('id', '=', row.id).execute();
        return true;
      });
    },

    async setScimTokenHash(owner, tokenHash, now) {
      const result = await db.updateTable('sso_connections').set({ scim_token_hash: tokenHash, updated_at: now }).where('owner', '=', owner).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async getIdentity(connectionId, subject) {
      const row = await db.selectFrom('sso_identities').select('user_id').where('connection_id', '=', connectionId).where('subject', '=', subject).executeTakeFirst();
      return row?.user_id ?? null;
    },

    async bindIdentity(connectionId, subject, userId, now) {
      const result = await db.insertInto('sso_identities').values({ connection_id: connectionId, subject, user_id: userId, created_at: now, last_sign_in_at: now })
        .onConflict((conflict) => conflict.doNothing()).executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    async touchIdentity(connectionId, subject, now) {
      await db.updateTable('sso_identities').set({ last_sign_in_at: now }).where('connection_id', '=', connectionId).where('subject', '=', subject).execute();
    },

    async createLogin(login) {
      await db.insertInto('sso_logins').values({
        state_hash: login.stateHash,
        connection_id: login.connectionId,
        browser_hash: login.browserHash,
        nonce: login.nonce,
        verifier_sealed: secretBox.seal(login.verifier),
        return_to: login.returnTo,
        created_at: login.createdAt,
        expires_at: login.expiresAt,
        used_at: null,
      }).execute();
    },

    async consumeLogin(stateHash, now) {
      // One UPDATE decides who uses the state: a replayed or concurrent callback finds it used.
      const result = await db.updateTable('sso_logins').set({ used_at: now })
        .where('state_hash', '=', stateHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
      if (result.numUpdatedRows === 0n) return null;
      const row = await db.selectFrom('sso_logins').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
      return row === undefined ? null : toLogin(row);
    },

    async deleteExpiredLogins(before) {
      await db.deleteFrom('sso_logins').where('expires_at', '<', before).execute();
    },
  };
}
