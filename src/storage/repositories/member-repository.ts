import type { Kysely, Selectable, Transaction } from 'kysely';
import { toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { ConsoleInvitationsTable } from '../console-schema.js';
import type { Database } from '../database-schema.js';
import { ACCOUNT_ROLES, type AccountMembership, type AccountRole, type ConsoleUser } from './console-repository.js';

export interface ConsoleInvitation {
  id: string;
  tokenHash: string;
  accountId: string;
  email: string;
  role: AccountRole;
  invitedBy: string;
  expiresAt: number;
  acceptedAt: number | null;
  acceptedBy: string | null;
  revokedAt: number | null;
  createdAt: number;
}

export interface AccountMember {
  userId: string;
  email: string;
  role: AccountRole;
  createdAt: number;
}

/** Who may act on an account: its members and the invitations that are still open. */
export interface MemberRepository {
  listMembers(accountId: string): Promise<AccountMember[]>;
  countOwners(accountId: string): Promise<number>;
  /** Changes a member's role; false when the user is not a member. */
  setRole(accountId: string, userId: string, role: AccountRole): Promise<boolean>;
  /** Removes the membership and ends the user's sessions on that account, in one transaction; false when not a member. */
  removeMember(accountId: string, userId: string): Promise<boolean>;

  createInvitation(invitation: ConsoleInvitation): Promise<void>;
  /** Invitations neither accepted, revoked nor expired, newest first. */
  listOpenInvitations(accountId: string, now: number): Promise<ConsoleInvitation[]>;
  getInvitationByTokenHash(tokenHash: string): Promise<ConsoleInvitation | null>;
  /** Marks an open invitation of the account revoked; false when there is none. */
  revokeInvitation(accountId: string, id: string, now: number): Promise<boolean>;
  /**
   * Uses the invitation (open and unexpired) and makes `user` a member in its role, in one transaction; `newUser`
   * is created first when given. False when the invitation was used, revoked or expired meanwhile.
   */
  acceptInvitation(tokenHash: string, userId: string, now: number, newUser: ConsoleUser | null): Promise<AccountMembership | null>;
  /**
   * Leaves `ownerId` the account's only member, as its owner, in one transaction: every other membership (and its
   * sessions on the account) removed, open invitations withdrawn, every key revoked. Says what it removed.
   */
  keepOnlyOwner(accountId: string, ownerId: string, now: number): Promise<ClearedAccount>;
}

/** What `keepOnlyOwner` removed. */
export interface ClearedAccount {
  members: string[];
  invitations: number;
  keys: number;
}

function toInvitation(row: Selectable<ConsoleInvitationsTable>): ConsoleInvitation {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    accountId: row.account_id,
    email: row.email,
    role: toOneOf(row.role, ACCOUNT_ROLES, 'account role'),
    invitedBy: row.invited_by,
    expiresAt: toNumber(row.expires_at),
    acceptedAt: toNullableNumber(row.accepted_at),
    acceptedBy: row.accepted_by,
    revokedAt: toNullableNumber(row.revoked_at),
    createdAt: toNumber(row.created_at),
  };
}

/** `acceptInvitation` inside its transaction. */
async function acceptInvitationIn(trx: Transaction<Database>, tokenHash: string, userId: string, now: number, newUser: ConsoleUser | null): Promise<AccountMembership | null> {
  const row = await trx.updateTable('console_invitations').set({ accepted_at: now, accepted_by: userId })
    .where('token_hash', '=', tokenHash).where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
    .returning(['account_id', 'role']).executeTakeFirst();
  if (row === undefined) return null;
  if (newUser !== null) {
    await trx.insertInto('console_users').values({
      id: newUser.id, email: newUser.email, password_hash: newUser.passwordHash, email_verified_at: newUser.emailVerifiedAt,
      totp_secret_sealed: null, totp_pending_sealed: null, totp_enabled_at: null, totp_last_step: null,
      created_at: newUser.createdAt, updated_at: newUser.updatedAt,
    }).execute();
  }
  const role = toOneOf(row.role, ACCOUNT_ROLES, 'account role');
  const existing = await trx.selectFrom('account_members').select('role').where('account_id', '=', row.account_id).where('user_id', '=', userId).executeTakeFirst();
  // Already a member: the invitation is used up and the existing role stays (a role changes through the members page).
  if (existing !== undefined) return { accountId: row.account_id, userId, role: toOneOf(existing.role, ACCOUNT_ROLES, 'account role'), createdAt: now };
  await trx.insertInto('account_members').values({ account_id: row.account_id, user_id: userId, role, created_at: now }).execute();
  return { accountId: row.account_id, userId, role, createdAt: now };
}

/** `keepOnlyOwner` inside its transaction. */
async function keepOnlyOwnerIn(trx: Transaction<Database>, accountId: string, ownerId: string, now: number): Promise<ClearedAccount> {
  const kept = await trx.updateTable('account_members').set({ role: 'owner' }).where('account_id', '=', accountId).where('user_id', '=', ownerId).executeTakeFirst();
  if (kept.numUpdatedRows === 0n) await trx.insertInto('account_members').values({ account_id: accountId, user_id: ownerId, role: 'owner', created_at: now }).execute();
  const others = await trx.deleteFrom('account_members').where('account_id', '=', accountId).where('user_id', '!=', ownerId).returning('user_id').execute();
  await trx.deleteFrom('console_sessions').where('account_id', '=', accountId).where('user_id', '!=', ownerId).execute();
  const invitations = await trx.updateTable('console_invitations').set({ revoked_at: now })
    .where('account_id', '=', accountId).where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
    .executeTakeFirst();
  const keys = await trx.updateTable('api_keys').set({ status: 'revoked', updated_at: now })
    .where('account_id', '=', accountId).where('status', '!=', 'revoked')
    .executeTakeFirst();
  return { members: others.map((row) => row.user_id), invitations: Number(invitations.numUpdatedRows), keys: Number(keys.numUpdatedRows) };
}

export function createMemberRepository(db: Kysely<Database>): MemberRepository {
  return {
    async listMembers(accountId) {
      const rows = await db.selectFrom('account_members').innerJoin('console_users', 'console_users.id', 'account_members.user_id')
        .select(['account_members.user_id', 'console_users.email', 'account_members.role', 'account_members.created_at'])
        .where('account_members.account_id', '=', accountId).orderBy('account_members.created_at').orderBy('account_members.user_id').execute();
      return rows.map((row) => ({ userId: row.user_id, email: row.email, role: toOneOf(row.role, ACCOUNT_ROLES, 'account role'), createdAt: toNumber(row.created_at) }));
    },

    async countOwners(accountId) {
      const row = await db.selectFrom('account_members').select((eb) => eb.fn.countAll().as('count'))
        .where('account_id', '=', accountId).where('role', '=', 'owner').executeTakeFirst();
      return row === undefined ? 0 : toNumber(row.count);
    },

    async setRole(accountId, userId, role) {
      const result = await db.updateTable('account_members').set({ role }).where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async removeMember(accountId, userId) {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('account_members').where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
        await trx.deleteFrom('console_sessions').where('account_id', '=', accountId).where('user_id', '=', userId).execute();
        return result.numDeletedRows > 0n;
      });
    },

    async createInvitation(invitation) {
      await db.insertInto('console_invitations').values({
        id: invitation.id,
        token_hash: invitation.tokenHash,
        account_id: invitation.accountId,
        email: invitation.email,
        role: invitation.role,
        invited_by: invitation.invitedBy,
        expires_at: invitation.expiresAt,
        accepted_at: invitation.acceptedAt,
        accepted_by: invitation.acceptedBy,
        revoked_at: invitation.revokedAt,
        created_at: invitation.createdAt,
      }).execute();
    },

    async listOpenInvitations(accountId, now) {
      const rows = await db.selectFrom('console_invitations').selectAll().where('account_id', '=', accountId)
        .where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
        .orderBy('created_at', 'desc').execute();
      return rows.map(toInvitation);
    },

    async getInvitationByTokenHash(tokenHash) {
      const row = await db.selectFrom('console_invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      return row === undefined ? null : toInvitation(row);
    },

    async revokeInvitation(accountId, id, now) {
      const result = await db.updateTable('console_invitations').set({ revoked_at: now })
        .where('account_id', '=', accountId).where('id', '=', id).where('accepted_at', 'is', null).where('revoked_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async acceptInvitation(tokenHash, userId, now, newUser) {
      return db.transaction().execute((trx) => acceptInvitationIn(trx, tokenHash, userId, now, newUser));
    },

    async keepOnlyOwner(accountId, ownerId, now) {
      return db.transaction().execute((trx) => keepOnlyOwnerIn(trx, accountId, ownerId, now));
    },
  };
}
