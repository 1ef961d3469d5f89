import type { ColumnType } from 'kysely';
import type { Database } from './database-schema.js';
import type { IntegerColumn, NullableIntegerColumn, NullableMoneyColumn } from './schema-columns.js';

/** Tables of projects (migration 0033), in the conventions of database-schema.ts. */
export interface ProjectsTable {
  id: string;
  account_id: string;
  name: string;
  quota_nano: NullableMoneyColumn;
  spent_nano: ColumnType<bigint, bigint | undefined, bigint>;
  budget_period: string | null;
  budget_limit_nano: NullableMoneyColumn;
  budget_spent_nano: ColumnType<bigint, bigint | undefined, bigint>;
  budget_period_start: ColumnType<number | bigint, number | undefined, number>;
  rpm: NullableIntegerColumn;
  tpm: NullableIntegerColumn;
  /** JSON array of strings, or NULL for "all models". */
  allowed_models: string | null;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface ProjectMembersTable {
  project_id: string;
  account_id: string;
  user_id: string;
  role: string;
  created_at: IntegerColumn;
}

export type ProjectTables = {
  projects: ProjectsTable;
  project_members: ProjectMembersTable;
};

export type ProjectDatabase = Database & ProjectTables;
