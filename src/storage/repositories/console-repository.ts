import type { Kysely, Selectable } from 'kysely';
import { toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { ConsoleSessionsTable, ConsoleUsersTable } from '../console-schema.js';
import type { Database } from '../database-schema.js';
import type { SecretBox } from '../../shared/secret-box.js';

/** What a member may do on an account; only `owner` is created today. */
export type AccountRole = 'owner' | 'admin' | 'developer' | 'billing' | 'viewer';
export const ACCOUNT_ROLES: readonly AccountRole[] = ['owner', 'admin', 'developer', 'billing', 'viewer'];

export interface ConsoleUser {
  id: string;
  email: string;
  passwordHash: string;
  emailVerifiedAt: number | null;
  /** The confirmed TOTP secret (base32), opened from its sealed form; null: two-factor is off. */
  totpSecret: string | null;
  /** A secret set up but not yet confirmed. */
  totpPendingSecret: string | null;
  totpEnabledAt: number | null;
  totpLastStep: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface AccountMembership {
  accountId: string;
  userId: string;
  role: AccountRole;
  createdAt: number;
}

export interface ConsoleSession {
  id: string;
  tokenHash: string;
  userId: string;
  accountId: string;
  csrfToken: string;
  ip: string;
  userAgent: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  /** The single sign-on connection the session was signed in through; null: a password (and second factor). */
  ssoConnectionId?: string | null;
}

export type ConsoleTokenKind = 'verify-email' | 'password-reset' | 'two-factor-challenge';

export interface ConsoleToken {
  tokenHash: string;
  kind: ConsoleTokenKind;
  userId: string;
  expiresAt: number;
  createdAt: number;
}

/** Users, memberships, sessions, single-use tokens and backup codes of the web console. */
export interface ConsoleRepository {
  /** Creates the user and its first membership in one transaction. */
  createUser(user: ConsoleUser, membership: AccountMembership): Promise<void>;
  getUserById(id: string): Promise<ConsoleUser | null>;
  getUserByEmail(email: string): Promise<ConsoleUser | null>;
  setPasswordHash(userId: string, passwordHash: string, now: number): Promise<void>;
  markEmailVerified(userId: string, now: number): Promise<void>;
  setPendingTotp(userId: string, secret: string | null, now: number): Promise<void>;
  /** Moves the pending secret to the active one and replaces the backup codes, in one transaction. */
  enableTotp(userId: string, secret: string, step: number, backupCodeHashes: string[], now: number): Promise<void>;
  disableTotp(userId: string, now: number): Promise<void>;
  /** Records `step` as the last TOTP step accepted; false when that step (or a later one) was accepted already. */
  claimTotpStep(userId: string, step: number): Promise<boolean>;
  replaceBackupCodes(userId: string, codeHashes: string[], now: number): Promise<void>;
  /** Marks an unused backup code used; false when it does not exist or was used. */
  useBackupCode(userId: string, codeHash: string, now: number): Promise<boolean>;
  countUnusedBackupCodes(userId: string): Promise<number>;

  /** The user's memberships, oldest first. */
  listMemberships(userId: string): Promise<AccountMembership[]>;
  getMembership(accountId: string, userId: string): Promise<AccountMembership | null>;

  createSession(session: ConsoleSession): Promise<void>;
  getSessionByTokenHash(tokenHash: string): Promise<ConsoleSession | null>;
  touchSession(id: string, now: number, ip: string): Promise<void>;
  listSessions(userId: string, now: number): Promise<ConsoleSession[]>;
  deleteSession(id: string): Promise<void>;
  /** Deletes the user's session `id`; false when there is none (or it is another user's). */
  deleteUserSession(userId: string, id: string): Promise<boolean>;
  /** Ends every session of the user except `keepId` (null: all). */
  deleteUserSessions(userId: string, keepId: string | null): Promise<void>;
  /** Ends every session on the account, whoever holds it. */
  deleteAccountSessions(accountId: string): Promise<void>;
  /**
   * Erases the personal data of the people who belong to this account only (a deleted account): email replaced by
   * a placeholder, password and second factor removed, tokens and backup codes dropped. Members of other accounts keep theirs.
   */
  eraseUsersOnlyIn(accountId: string, now: number): Promise<void>;

  createToken(token: ConsoleToken): Promise<void>;
  /** Marks the token used if it is of that kind, unexpired and unused; returns its user id, or null. */
  consumeToken(tokenHash: string, kind: ConsoleTokenKind, now: number): Promise<string | null>;
  /** The user of a live token, without using it up. */
  peekToken(tokenHash: string, kind: ConsoleTokenKind, now: number): Promise<string | null>;
  /** Marks every unused token of that kind of the user used. */
  retireTokens(userId: string, kind: ConsoleTokenKind, now: number): Promise<void>;
}

const TOKEN_KINDS: readonly ConsoleTokenKind[] = ['verify-email', 'password-reset', 'two-factor-challenge'];

function toSession(row: Selectable<ConsoleSessionsTable>): ConsoleSession {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    userId: row.user_id,
    accountId: row.account_id,
    csrfToken: row.csrf_token,
    ip: row.ip,
    userAgent: row.user_agent,
    createdAt: toNumber(row.created_at),
    lastSeenAt: toNumber(row.last_seen_at),
    expiresAt: toNumber(row.expires_at),
    ssoConnectionId: row.sso_connection_id ?? null,
  };
}

export function createConsoleRepository(db: Kysely<Database>, secretBox: SecretBox): ConsoleRepository {
  const open = (sealed: string | null): string | null => (sealed === null ? null : secretBox.open(sealed));
  const toUser = (row: Selectable<ConsoleUsersTable>): ConsoleUser => ({
    id: row.id,
    email: row.email,
    passwordHash: row.password_hash,
    emailVerifiedAt: toNullableNumber(row.email_verified_at),
    totpSecret: open(row.totp_secret_sealed),
    totpPendingSecret: open(row.totp_pending_sealed),
    totpEnabledAt: toNullableNumber(row.totp_enabled_at),
    totpLastStep: toNullableNumber(row.totp_last_step),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  });
  const insertCodes = async (executor: Kysely<Database>, userId: string, codeHashes: string[], now: number): Promise<void> => {
    await executor.deleteFrom('console_backup_codes').where('user_id', '=', userId).execute();
    if (codeHashes.length === 0) return;
    await executor.insertInto('console_backup_codes').values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null, created_at: now }))).execute();
  };

  return {
    async createUser(user, membership) {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('console_users').values({
          id: user.id,
          email: user.email,
          password_hash: user.passwordHash,
          email_verified_at: user.emailVerifiedAt,
          totp_secret_sealed: null,
          totp_pending_sealed: null,
          totp_enabled_at: null,
          totp_last_step: null,
          created_at: user.createdAt,
          updated_at: user.updatedAt,
        }).execute();
        await trx.insertInto('account_members').values({
          account_id: membership.accountId, user_id: membership.userId, role: membership.role, created_at: membership.createdAt,
        }).execute();
      });
    },

    async getUserById(id) {
      const row = await db.selectFrom('console_users').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toUser(row);
    },

    async getUserByEmail(email) {
      const row = await db.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirst();
      return row === undefined ? null : toUser(row);
    },

    async setPasswordHash(userId, passwordHash, now) {
      await db.updateTable('console_users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', userId).execute();
    },

    async markEmailVerified(userId, now) {
      await db.updateTable('console_users').set({ email_verified_at: now, updated_at: now }).where('id', '=', userId).where('email_verified_at', 'is', null).execute();
    },

    async setPendingTotp(userId, secret, now) {
      await db.updateTable('console_users').set({ totp_pending_sealed: secret === null ? null : secretBox.seal(secret), updated_at: now }).where('id', '=', userId).execute();
    },

    async enableTotp(userId, secret, step, backupCodeHashes, now) {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('console_users').set({
          totp_secret_sealed: secretBox.seal(secret), totp_pending_sealed: null, totp_enabled_at: now, totp_last_step: step, updated_at: now,
        }).where('id', '=', userId).execute();
        await insertCodes(trx, userId, backupCodeHashes, now);
      });
    },

    async disableTotp(userId, now) {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('console_users').set({
          totp_secret_sealed: null, totp_pending_sealed: null, totp_enabled_at: null, updated_at: now,
        }).where('id', '=', userId).execute();
        await trx.deleteFrom('console_backup_codes').where('user_id', '=', userId).execute();
      });
    },

    async claimTotpStep(userId, step) {
      const result = await db.updateTable('console_users').set({ totp_last_step: step })
        .where('id', '=', userId)
        .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async replaceBackupCodes(userId, codeHashes, now) {
      await db.transaction().execute((trx) => insertCodes(trx, userId, codeHashes, now));
    },

    async useBackupCode(userId, codeHash, now) {
      const result = await db.updateTable('console_backup_codes').set({ used_at: now })
        .where('user_id', '=', userId).where('code_hash', '=', codeHash).where('used_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async countUnusedBackupCodes(userId) {
      const row = await db.selectFrom('console_backup_codes').select((eb) => eb.fn.countAll().as('count'))
        .where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
      return row === undefined ? 0 : toNumber(row.count);
    },

    async listMemberships(userId) {
      const rows = await db.selectFrom('account_members').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('account_id').execute();
      return rows.map((row) => ({ accountId: row.account_id, userId: row.user_id, role: toOneOf(row.role, ACCOUNT_ROLES, 'account role'), createdAt: toNumber(row.created_at) }));
    },

    async getMembership(accountId, userId) {
      const row = await db.selectFrom('account_members').selectAll().where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
      return row === undefined ? null : { accountId: row.account_id, userId: row.user_id, role: toOneOf(row.role, ACCOUNT_ROLES, 'account role'), createdAt: toNumber(row.created_at) };
    },

    async createSession(session) {
      await db.insertInto('console_sessions').values({
        id: session.id,
        token_hash: session.tokenHash,
        user_id: session.userId,
        account_id: session.accountId,
        csrf_token: session.csrfToken,
        ip: session.ip,
        user_agent: session.userAgent,
        created_at: session.createdAt,
        last_seen_at: session.lastSeenAt,
        expires_at: session.expiresAt,
        sso_connection_id: session.ssoConnectionId ?? null,
      }).execute();
    },

    async getSessionByTokenHash(tokenHash) {
      const row = await db.selectFrom('console_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      return row === undefined ? null : toSession(row);
    },

    async touchSession(id, now, ip) {
      await db.updateTable('console_sessions').set({ last_seen_at: now, ip }).where('id', '=', id).execute();
    },

    async listSessions(userId, now) {
      const rows = await db.selectFrom('console_sessions').selectAll().where('user_id', '=', userId).where('expires_at', '>', now)
        .orderBy('last_seen_at', 'desc').execute();
      return rows.map(toSession);
    },

    async deleteSession(id) {
      await db.deleteFrom('console_sessions').where('id', '=', id).execute();
    },

    async deleteUserSession(userId, id) {
      const result = await db.deleteFrom('console_sessions').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteAccountSessions(accountId) {
      await db.deleteFrom('console_sessions').where('account_id', '=', accountId).execute();
    },

    async eraseUsersOnlyIn(accountId, now) {
      const members = await db.selectFrom('account_members').select('user_id').where('account_id', '=', accountId).execute();
      for (const { user_id: userId } of members) {
        const elsewhere = await db.selectFrom('account_members').select('account_id')
          .where('user_id', '=', userId).where('account_id', '!=', accountId).executeTakeFirst();
        if (elsewhere !== undefined) continue;
        await db.transaction().execute(async (transaction) => {
          await transaction.updateTable('console_users').set({
            email: `deleted+${userId}@deleted.invalid`, password_hash: '!none', email_verified_at: null,
            totp_secret_sealed: null, totp_pending_sealed: null, totp_enabled_at: null, totp_last_step: null, updated_at: now,
          }).where('id', '=', userId).execute();
          await transaction.deleteFrom('console_backup_codes').where('user_id', '=', userId).execute();
          await transaction.deleteFrom('console_tokens').where('user_id', '=', userId).execute();
        });
      }
    },

    async deleteUserSessions(userId, keepId) {
      let query = db.deleteFrom('console_sessions').where('user_id', '=', userId);
      if (keepId !== null) query = query.where('id', '!=', keepId);
      await query.execute();
    },

    async createToken(token) {
      await db.insertInto('console_tokens').values({
        token_hash: token.tokenHash, kind: token.kind, user_id: token.userId, expires_at: token.expiresAt, used_at: null, created_at: token.createdAt,
      }).execute();
    },

    async consumeToken(tokenHash, kind, now) {
      const row = await db.updateTable('console_tokens').set({ used_at: now })
        .where('token_hash', '=', tokenHash).where('kind', '=', toOneOf(kind, TOKEN_KINDS, 'token kind'))
        .where('used_at', 'is', null).where('expires_at', '>', now)
        .returning('user_id').executeTakeFirst();
      return row?.user_id ?? null;
    },

    async peekToken(tokenHash, kind, now) {
      const row = await db.selectFrom('console_tokens').select('user_id')
        .where('token_hash', '=', tokenHash).where('kind', '=', kind).where('used_at', 'is', null).where('expires_at', '>', now)
        .executeTakeFirst();
      return row?.user_id ?? null;
    },

    async retireTokens(userId, kind, now) {
      await db.updateTable('console_tokens').set({ used_at: now }).where('user_id', '=', userId).where('kind', '=', kind).where('used_at', 'is', null).execute();
    },
  };
}
