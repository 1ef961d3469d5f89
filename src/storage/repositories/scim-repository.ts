import type { Kysely, Selectable } from 'kysely';
import { fromBoolean, toBoolean, toNumber } from '../convert.js';
import type { ScimGroupsTable, ScimUsersTable, SsoDatabase } from '../sso-schema.js';
import type { AccountRole } from './console-repository.js';

/** A person an account's directory provisioned, and the console user it stands for. */
export interface ScimUser {
  id: string;
  accountId: string;
  userId: string;
  /** The directory's login name (an email address), lowercase. */
  userName: string;
  externalId: string | null;
  displayName: string | null;
  active: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface ScimGroup {
  id: string;
  accountId: string;
  displayName: string;
  externalId: string | null;
  /** Ids of the SCIM users in the group. */
  memberIds: string[];
  createdAt: number;
  updatedAt: number;
}

export interface ScimListPage<T> {
  items: T[];
  total: number;
}

export type ScimUserPatch = Partial<Pick<ScimUser, 'userName' | 'externalId' | 'displayName' | 'active'>>;

/** Users and groups of an account's SCIM directory, and the memberships they decide. Every call is scoped to one account. */
export interface ScimRepository {
  createUser(user: ScimUser): Promise<void>;
  getUser(accountId: string, id: string): Promise<ScimUser | null>;
  getUserByConsoleUser(accountId: string, userId: string): Promise<ScimUser | null>;
  /** `offset` from 0; `userName` filters on an exact (lowercase) name. */
  listUsers(accountId: string, offset: number, count: number, userName: string | null): Promise<ScimListPage<ScimUser>>;
  updateUser(accountId: string, id: string, patch: ScimUserPatch, now: number): Promise<ScimUser | null>;
  /** Deletes the user and their group memberships. */
  deleteUser(accountId: string, id: string): Promise<boolean>;

  createGroup(group: ScimGroup): Promise<void>;
  getGroup(accountId: string, id: string): Promise<ScimGroup | null>;
  listGroups(accountId: string, offset: number, count: number, displayName: string | null): Promise<ScimListPage<ScimGroup>>;
  updateGroup(accountId: string, id: string, patch: { displayName?: string; externalId?: string | null }, now: number): Promise<boolean>;
  deleteGroup(accountId: string, id: string): Promise<boolean>;
  /** Adds (or, with `replace`, sets) the group's members; ids of other accounts' users are ignored. */
  addGroupMembers(accountId: string, groupId: string, scimUserIds: string[], replace: boolean): Promise<void>;
  removeGroupMembers(accountId: string, groupId: string, scimUserIds: string[]): Promise<void>;
  /** The names of the groups a SCIM user is in. */
  groupNamesOf(scimUserId: string): Promise<string[]>;

  /**
   * Makes the console user a member of the account with `role`, or (role null) removes their membership and ends their
   * sessions on it. An owner's membership is never changed: owners are managed in the console only.
   */
  setMembership(accountId: string, userId: string, role: AccountRole | null, now: number): Promise<void>;
}

function toUser(row: Selectable<ScimUsersTable>): ScimUser {
  return {
    id: row.id, accountId: row.account_id, userId: row.user_id, userName: row.user_name, externalId: row.external_id,
    displayName: row.display_name, active: toBoolean(row.active), createdAt: toNumber(row.created_at), updatedAt: toNumber(row.updated_at),
  };
}

export function createScimRepository(db: Kysely<SsoDatabase>): ScimRepository {
  const withMembers = async (row: Selectable<ScimGroupsTable>): Promise<ScimGroup> => {
    const members = await db.selectFrom('scim_group_members').select('scim_user_id').where('group_id', '=', row.id).orderBy('scim_user_id').execute();
    return {
      id: row.id, accountId: row.account_id, displayName: row.display_name, externalId: row.external_id,
      memberIds: members.map((member) => member.scim_user_id), createdAt: toNumber(row.created_at), updatedAt: toNumber(row.updated_at),
    };
  };
  const accountUserIds = async (accountId: string, ids: string[]): Promise<string[]> => {
    if (ids.length === 0) return [];
    const rows = await db.selectFrom('scim_users').select('id').where('account_id', '=', accountId).where('id', 'in', ids).execute();
    return rows.map((row) => row.id);
  };

  return {
    async createUser(user) {
      await db.insertInto('scim_users').values({
        id: user.id, account_id: user.accountId, user_id: user.userId, user_name: user.userName, external_id: user.externalId,
        display_name: user.displayName, active: fromBoolean(user.active), created_at: user.createdAt, updated_at: user.updatedAt,
      }).execute();
    },

    async getUser(accountId, id) {
      const row = await db.selectFrom('scim_users').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toUser(row);
    },

    async getUserByConsoleUser(accountId, userId) {
      const row = await db.selectFrom('scim_users').selectAll().where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
      return row === undefined ? null : toUser(row);
    },

    async listUsers(accountId, offset, count, userName) {
      let query = db.selectFrom('scim_users').where('account_id', '=', accountId);
      if (userName !== null) query = query.where('user_name', '=', userName);
      const total = await query.select((eb) => eb.fn.countAll().as('count')).executeTakeFirst();
      const rows = count === 0 ? [] : await query.selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(count).execute();
      return { items: rows.map(toUser), total: toNumber(total?.count ?? 0) };
    },

    async updateUser(accountId, id, patch, now) {
      await db.updateTable('scim_users').set({
        updated_at: now,
        ...(patch.userName === undefined ? {} : { user_name: patch.userName }),
        ...(patch.externalId === undefined ? {} : { external_id: patch.externalId }),
        ...(patch.displayName === undefined ? {} : { display_name: patch.displayName }),
        ...(patch.active === undefined ? {} : { active: fromBoolean(patch.active) }),
      }).where('account_id', '=', accountId).where('id', '=', id).execute();
      const row = await db.selectFrom('scim_users').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toUser(row);
    },

    async deleteUser(accountId, id) {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('scim_users').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
        if (result.numDeletedRows === 0n) return false;
        await trx.deleteFrom('scim_group_members').where('scim_user_id', '=', id).execute();
        return true;
      });
    },

    async createGroup(group) {
      // Read before the transaction: SQLite's one connection is the transaction's until it ends.
      const members = await accountUserIds(group.accountId, group.memberIds);
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('scim_groups').values({
          id: group.id, account_id: group.accountId, display_name: group.displayName, external_id: group.externalId,
          created_at: group.createdAt, updated_at: group.updatedAt,
        }).execute();
        if (members.length > 0) await trx.insertInto('scim_group_members').values(members.map((id) => ({ group_id: group.id, scim_user_id: id }))).execute();
      });
    },

    async getGroup(accountId, id) {
      const row = await db.selectFrom('scim_groups').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : withMembers(row);
    },

    async listGroups(accountId, offset, count, displayName) {
      let query = db.selectFrom('scim_groups').where('account_id', '=', accountId);
      if (displayName !== null) query = query.where('display_name', '=', displayName);
      const total = await query.select((eb) => eb.fn.countAll().as('count')).executeTakeFirst();
      const rows = count === 0 ? [] : await query.selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(count).execute();
      return { items: await Promise.all(rows.map(withMembers)), total: toNumber(total?.count ?? 0) };
    },

    async updateGroup(accountId, id, patch, now) {
      const result = await db.updateTable('scim_groups').set({
        updated_at: now,
        ...(patch.displayName === undefined ? {} : { display_name: patch.displayName }),
        ...(patch.externalId === undefined ? {} : { external_id: patch.externalId }),
      }).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async deleteGroup(accountId, id) {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('scim_groups').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
        if (result.numDeletedRows === 0n) return false;
        await trx.deleteFrom('scim_group_members').where('group_id', '=', id).execute();
        return true;
      });
    },

    async addGroupMembers(accountId, groupId, scimUserIds, replace) {
      const members = await accountUserIds(accountId, [...new Set(scimUserIds)]);
      await db.transaction().execute(async (trx) => {
        if (replace) await trx.deleteFrom('scim_group_members').where('group_id', '=', groupId).execute();
        if (members.length === 0) return;
        await trx.insertInto('scim_group_members').values(members.map((id) => ({ group_id: groupId, scim_user_id: id })))
          .onConflict((conflict) => conflict.columns(['group_id', 'scim_user_id']).doNothing()).execute();
      });
    },

    async removeGroupMembers(accountId, groupId, scimUserIds) {
      const members = await accountUserIds(accountId, scimUserIds);
      if (members.length === 0) return;
      await db.deleteFrom('scim_group_members').where('group_id', '=', groupId).where('scim_user_id', 'in', members).execute();
    },

    async groupNamesOf(scimUserId) {
      const rows = await db.selectFrom('scim_group_members').innerJoin('scim_groups', 'scim_groups.id', 'scim_group_members.group_id')
        .select('scim_groups.display_name').where('scim_group_members.scim_user_id', '=', scimUserId).orderBy('scim_groups.display_name').execute();
      return rows.map((row) => row.display_name);
    },

    async setMembership(accountId, userId, role, now) {
      await db.transaction().execute(async (trx) => {
        const current = await trx.selectFrom('account_members').select('role').where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
        if (current?.role === 'owner') return;
        if (role === null) {
          if (current === undefined) return;
          await trx.deleteFrom('account_members').where('account_id', '=', accountId).where('user_id', '=', userId).execute();
          await trx.deleteFrom('console_sessions').where('account_id', '=', accountId).where('user_id', '=', userId).execute();
          return;
        }
        if (current === undefined) {
          await trx.insertInto('account_members').values({ account_id: accountId, user_id: userId, role, created_at: now })
            .onConflict((conflict) => conflict.columns(['account_id', 'user_id']).doNothing()).execute();
        } else if (current.role !== role) {
          await trx.updateTable('account_members').set({ role }).where('account_id', '=', accountId).where('user_id', '=', userId).execute();
        }
      });
    },
  };
}
