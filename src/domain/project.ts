import type { KeyBudget, NanoUsd } from './records.js';

/**
 * A project groups an account's keys under its own quota cap, period budget, RPM/TPM limits and model allowlist.
 * Every charge of one of its keys counts against the key's own limits, the project's and the account's wallet, all
 * or nothing. Keys without a project are in the account's default project, which has no limits of its own.
 */
export interface Project {
  id: string;
  accountId: string;
  name: string;
  /** Lifetime spend cap of all its keys together; null: none. */
  quotaNano: NanoUsd | null;
  /** Every charge settled to one of its keys. */
  spentNano: NanoUsd;
  /** Spend limit that starts again each UTC day, week or month (the keys' budget rules). */
  budget: KeyBudget | null;
  rpm: number | null;
  tpm: number | null;
  /** Models its keys may use (ids or the names requests use); null: every model. */
  allowedModels: string[] | null;
  createdAt: number;
  updatedAt: number;
}

/** The id the API gives the account's default project (the keys whose `project_id` is stored as null). */
export const DEFAULT_PROJECT_ID = 'default';

/**
 * A console user's role inside one project: `developer` makes, changes and uses the project's keys; `viewer` only
 * reads its keys and usage. A member of one or more projects who is not an account owner or admin sees those
 * projects only.
 */
export type ProjectRole = 'developer' | 'viewer';
export const PROJECT_ROLES: readonly ProjectRole[] = ['developer', 'viewer'];

export interface ProjectMember {
  projectId: string;
  accountId: string;
  userId: string;
  role: ProjectRole;
  createdAt: number;
}

export type ProjectPatch = Partial<Pick<Project, 'name' | 'quotaNano' | 'budget' | 'rpm' | 'tpm' | 'allowedModels'>> & {
  /** The budget keeps its period: only its limit is written, so spend settled meanwhile is not overwritten. */
  budgetLimitOnly?: boolean;
};

export interface ProjectRepository {
  create(project: Project): Promise<void>;
  getById(id: string): Promise<Project | null>;
  /** The projects of these ids that exist, in id order (one statement for hundreds). */
  getByIds(ids: readonly string[]): Promise<Project[]>;
  /** Every project of the account, oldest first (an account has few). */
  listByAccount(accountId: string): Promise<Project[]>;
  update(id: string, patch: ProjectPatch, now: number): Promise<Project | null>;
  /** Deletes the project and its memberships; refused (false) while a key that is not revoked belongs to it. */
  delete(id: string): Promise<boolean>;
  /** Ids of the project's keys (revoked ones too); null project: the account's default project. */
  keyIds(accountId: string, projectId: string | null): Promise<string[]>;
  members(projectId: string): Promise<ProjectMember[]>;
  /** The user's project roles in the account (empty: the user is not scoped to projects there). */
  membershipsOf(accountId: string, userId: string): Promise<ProjectMember[]>;
  setMember(member: ProjectMember): Promise<void>;
  removeMember(projectId: string, userId: string): Promise<boolean>;
}
