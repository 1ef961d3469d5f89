import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { parseNullableStringArray, toBigInt, toNullableBigInt, toNullableJson, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { ProjectDatabase, ProjectMembersTable, ProjectsTable } from '../project-schema.js';
import type { KeyBudget } from '../../domain/records.js';
import { PROJECT_ROLES, type Project, type ProjectMember, type ProjectPatch, type ProjectRepository } from '../../domain/project.js';
import { budgetChanges, budgetColumns, budgetOf } from './budget-columns.js';
import { tableAccess, type TableMapping } from './table-access.js';

/** The budget columns of a project row (all null or all set), as the money transaction reads them too. */
export function projectBudgetOf(row: Pick<Selectable<ProjectsTable>, 'budget_period' | 'budget_limit_nano' | 'budget_spent_nano' | 'budget_period_start'>): KeyBudget | null {
  return budgetOf(row, 'project budget period');
}

function toRecord(row: Selectable<ProjectsTable>): Project {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    quotaNano: toNullableBigInt(row.quota_nano),
    spentNano: toBigInt(row.spent_nano),
    budget: projectBudgetOf(row),
    rpm: toNullableNumber(row.rpm),
    tpm: toNullableNumber(row.tpm),
    allowedModels: parseNullableStringArray(row.allowed_models, 'projects.allowed_models'),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function toMember(row: Selectable<ProjectMembersTable>): ProjectMember {
  return {
    projectId: row.project_id,
    accountId: row.account_id,
    userId: row.user_id,
    role: toOneOf(row.role, PROJECT_ROLES, 'project role'),
    createdAt: toNumber(row.created_at),
  };
}

function toChanges(patch: ProjectPatch, now: number): Updateable<ProjectsTable> {
  const changes: Updateable<ProjectsTable> = { updated_at: now };
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.quotaNano !== undefined) changes.quota_nano = patch.quotaNano;
  if (patch.rpm !== undefined) changes.rpm = patch.rpm;
  if (patch.tpm !== undefined) changes.tpm = patch.tpm;
  if (patch.allowedModels !== undefined) changes.allowed_models = toNullableJson(patch.allowedModels);
  return Object.assign(changes, budgetChanges(patch));
}

function toRow(project: Project): Insertable<ProjectsTable> {
  return {
    id: project.id,
    account_id: project.accountId,
    name: project.name,
    quota_nano: project.quotaNano,
    spent_nano: project.spentNano,
    ...budgetColumns(project.budget),
    rpm: project.rpm,
    tpm: project.tpm,
    allowed_models: toNullableJson(project.allowedModels),
    created_at: project.createdAt,
    updated_at: project.updatedAt,
  };
}

const PROJECTS: TableMapping<'projects', Project, ProjectPatch, ProjectDatabase> = {
  table: 'projects', key: 'id', keyOf: (project) => project.id, toRecord, toRow, toChanges,
};

export function createProjectRepository(db: Kysely<ProjectDatabase>): ProjectRepository {
  const projects = tableAccess(db, PROJECTS);
  return {
    create: projects.insert,
    getById: projects.get,
    getByIds: projects.getMany,
    listByAccount: (accountId) => projects.listAll({ account_id: accountId }),
    update: projects.update,

    async delete(id) {
      return db.transaction().execute(async (trx) => {
        const live = await trx.selectFrom('api_keys').select('id').where('project_id', '=', id).where('status', '!=', 'revoked').limit(1).executeTakeFirst();
        if (live !== undefined) return false;
        await trx.updateTable('api_keys').set({ project_id: null }).where('project_id', '=', id).execute();
        await trx.deleteFrom('project_members').where('project_id', '=', id).execute();
        await trx.deleteFrom('projects').where('id', '=', id).execute();
        return true;
      });
    },

    async keyIds(accountId, projectId) {
      let query = db.selectFrom('api_keys').select('id').where('account_id', '=', accountId);
      query = projectId === null ? query.where('project_id', 'is', null) : query.where('project_id', '=', projectId);
      return (await query.execute()).map((row) => row.id);
    },

    async members(projectId) {
      const rows = await db.selectFrom('project_members').selectAll().where('project_id', '=', projectId).orderBy('created_at').execute();
      return rows.map(toMember);
    },

    async membershipsOf(accountId, userId) {
      const rows = await db.selectFrom('project_members').selectAll().where('account_id', '=', accountId).where('user_id', '=', userId).execute();
      return rows.map(toMember);
    },

    async setMember(member) {
      await db.insertInto('project_members').values({
        project_id: member.projectId,
        account_id: member.accountId,
        user_id: member.userId,
        role: member.role,
        created_at: member.createdAt,
      }).onConflict((conflict) => conflict.columns(['project_id', 'user_id']).doUpdateSet({ role: member.role })).execute();
    },

    async removeMember(projectId, userId) {
      const result = await db.deleteFrom('project_members').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
