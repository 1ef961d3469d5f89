import { z } from 'zod';
import type { ProjectJson, ProjectMemberJson } from '../contract/projects.js';
import { nanoToUsd } from '../billing/money.js';
import type { KeyHolds } from '../billing/ledger-requests.js';
import { budgetPeriodAt, budgetSpentAt } from '../domain/budget-period.js';
import { DEFAULT_PROJECT_ID, PROJECT_ROLES, type Project, type ProjectMember, type ProjectPatch } from '../domain/project.js';
import type { KeyBudget } from '../domain/records.js';
import { limitInput } from '../management/limit-input.js';
import { nonNegativeUsdInput } from '../management/money-input.js';
import { isoTime } from '../management/time-input.js';
import { budgetFromInput } from '../management/account-input.js';

/** A project's attributes on input (the admin API and the console take the same). */
const projectAttributes = {
  quota_usd: nonNegativeUsdInput.nullable().optional(),
  budget: z.object({ period: z.enum(['day', 'week', 'month']), limit_usd: nonNegativeUsdInput }).strict().nullable().optional(),
  rpm: limitInput,
  tpm: limitInput,
  allowed_models: z.array(z.string().min(1)).max(10_000).nullable().optional(),
};

const projectName = z.string().trim().min(1).max(100);

export const createProjectSchema = z.object({ name: projectName, ...projectAttributes }).strict();
export const updateProjectSchema = z.object({ name: projectName.optional(), ...projectAttributes }).strict();
export const projectMemberSchema = z.object({ user_id: z.string().min(1).max(100), role: z.enum(PROJECT_ROLES as [string, ...string[]]) }).strict();

export type CreateProjectInput = z.infer<typeof createProjectSchema>;
export type UpdateProjectInput = z.infer<typeof updateProjectSchema>;

export function newProjectRecord(id: string, accountId: string, input: CreateProjectInput, now: number): Project {
  return {
    id,
    accountId,
    name: input.name,
    quotaNano: input.quota_usd ?? null,
    spentNano: 0n,
    budget: budgetFromInput(input.budget ?? null, null, now),
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    allowedModels: input.allowed_models ?? null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The patch of an update; changing only a budget's limit keeps what its period has spent. */
export function projectPatchFromInput(input: UpdateProjectInput, existing: Project, now: number): ProjectPatch {
  const patch: ProjectPatch = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.quota_usd !== undefined) patch.quotaNano = input.quota_usd;
  if (input.rpm !== undefined) patch.rpm = input.rpm;
  if (input.tpm !== undefined) patch.tpm = input.tpm;
  if (input.allowed_models !== undefined) patch.allowedModels = input.allowed_models;
  if (input.budget !== undefined) {
    patch.budget = budgetFromInput(input.budget, existing.budget, now);
    if (input.budget !== null && existing.budget?.period === input.budget.period) patch.budgetLimitOnly = true;
  }
  return patch;
}

function budgetToJson(budget: KeyBudget | null, heldNano: bigint, now: number): ProjectJson['budget'] {
  if (budget === null) return null;
  return {
    period: budget.period,
    limit_usd: nanoToUsd(budget.limitNano),
    spent_usd: nanoToUsd(budgetSpentAt(budget, now)),
    held_usd: nanoToUsd(heldNano),
    resets_at: isoTime(budgetPeriodAt(budget.period, now).end),
  };
}

/**
 * The one JSON view of a project (admin API and console). `status` is `paused` while its cap or budget has nothing
 * left once spend and the amounts held for requests in flight are counted: its keys are then refused 429.
 */
export function projectToJson(project: Project, holds: KeyHolds, keyCount: number, guardrails: readonly string[], now: number): ProjectJson {
  const capPaused = project.quotaNano !== null && project.spentNano + holds.capHeldNano >= project.quotaNano;
  const budgetPaused = project.budget !== null && budgetSpentAt(project.budget, now) + holds.budgetHeldNano >= project.budget.limitNano;
  return {
    id: project.id,
    object: 'project',
    account_id: project.accountId,
    name: project.name,
    default: false,
    status: capPaused || budgetPaused ? 'paused' : 'enabled',
    quota_usd: project.quotaNano === null ? null : nanoToUsd(project.quotaNano),
    spent_usd: nanoToUsd(project.spentNano),
    held_usd: nanoToUsd(holds.capHeldNano > holds.budgetHeldNano ? holds.capHeldNano : holds.budgetHeldNano),
    budget: budgetToJson(project.budget, holds.budgetHeldNano, now),
    rpm: project.rpm,
    tpm: project.tpm,
    allowed_models: project.allowedModels,
    guardrails: [...guardrails],
    key_count: keyCount,
    created_at: isoTime(project.createdAt),
    updated_at: isoTime(project.updatedAt),
  };
}

/** The account's default project: the keys without a project, with no limits of its own (the account's apply). */
export function defaultProjectJson(accountId: string, spentNano: bigint, keyCount: number): ProjectJson {
  return {
    id: DEFAULT_PROJECT_ID,
    object: 'project',
    account_id: accountId,
    name: 'Default',
    default: true,
    status: 'enabled',
    quota_usd: null,
    spent_usd: nanoToUsd(spentNano),
    held_usd: 0,
    budget: null,
    rpm: null,
    tpm: null,
    allowed_models: null,
    guardrails: [],
    key_count: keyCount,
    created_at: null,
    updated_at: null,
  };
}

export function projectMemberToJson(member: ProjectMember, email: string | null): ProjectMemberJson {
  return { project_id: member.projectId, user_id: member.userId, email, role: member.role, created_at: isoTime(member.createdAt) };
}
