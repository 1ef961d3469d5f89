import { z } from 'zod';
import { memberRole } from './account.js';
import { isoTime } from './common.js';
import { budgetPeriod, keyBudget } from './keys.js';

export const projectRole = z.enum(['developer', 'viewer']);

/**
 * A project of the account: a group of keys with its own cap, budget, limits and allowlist. `status` is `paused`
 * while its cap or budget has nothing left once the amounts held for requests in flight are counted.
 */
export const project = z.strictObject({
  id: z.string(),
  object: z.literal('project'),
  account_id: z.string(),
  name: z.string(),
  /** The account's default project: keys without a project, no limits of its own (the account's apply). */
  default: z.boolean(),
  status: z.enum(['enabled', 'paused']),
  quota_usd: z.number().nullable(),
  spent_usd: z.number(),
  held_usd: z.number(),
  budget: keyBudget.extend({ held_usd: z.number() }).nullable(),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  allowed_models: z.array(z.string()).nullable(),
  /** Guardrail policy names bound to the project: they run on its keys' requests with the account's, key's and model's (none on the default project). */
  guardrails: z.array(z.string()),
  key_count: z.number(),
  created_at: isoTime.nullable(),
  updated_at: isoTime.nullable(),
});
export type ProjectJson = z.infer<typeof project>;

/** A project as the console shows it, with the caller's role in it: their project role when scoped, else their account role. */
export const consoleProject = project.extend({ your_role: z.union([memberRole, projectRole]).nullable() });
export type ConsoleProjectJson = z.infer<typeof consoleProject>;

/** GET /api/projects. */
export const consoleProjectList = z.strictObject({ data: z.array(consoleProject) });
export type ConsoleProjectListJson = z.infer<typeof consoleProjectList>;
/** GET, POST and PATCH /api/projects[/:id]. */
export const consoleProjectAnswer = z.strictObject({ project: consoleProject });
export type ConsoleProjectAnswerJson = z.infer<typeof consoleProjectAnswer>;

export const projectMember = z.strictObject({ project_id: z.string(), user_id: z.string(), email: z.string().nullable(), role: projectRole, created_at: isoTime });
export type ProjectMemberJson = z.infer<typeof projectMember>;
/** GET /api/projects/:id/members. */
export const projectMemberList = z.strictObject({ data: z.array(projectMember) });
export type ProjectMemberListJson = z.infer<typeof projectMemberList>;
/** PUT /api/projects/:id/members/:user_id. */
export const projectMemberAnswer = z.strictObject({ member: projectMember });
export type ProjectMemberAnswerJson = z.infer<typeof projectMemberAnswer>;

/** A budget on input: what may be spent in each UTC day, week (from Monday) or month. */
export const budgetInput = z.strictObject({ period: budgetPeriod, limit_usd: z.number() });

/** The body the console creates and edits a project with; null clears an attribute. */
export const projectInput = z.strictObject({
  name: z.string(),
  quota_usd: z.number().nullable(),
  budget: budgetInput.nullable(),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  allowed_models: z.array(z.string()).nullable(),
  /** Guardrail policy names (among those GET /api/guardrails offers; the operator's own stay on the project). */
  guardrails: z.array(z.string()).optional(),
});
export type ProjectInputJson = z.infer<typeof projectInput>;

/** The body the console creates and edits a key with; null clears an attribute on edit. */
export const keyInput = z.strictObject({
  name: z.string(),
  environment: z.string().nullable(),
  quota_usd: z.number().nullable(),
  allowed_models: z.array(z.string()).nullable(),
  ip_allowlist: z.array(z.string()).nullable(),
  expires_at: isoTime.nullable(),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  concurrency: z.number().nullable(),
  budget: budgetInput.nullable(),
  allowed_origins: z.array(z.string()).nullable(),
  /** A project id, or `default`. */
  project_id: z.string(),
  /** Guardrail policy names (among those GET /api/guardrails offers; the operator's own stay on the key). */
  guardrails: z.array(z.string()).optional(),
  /** MCP server names (among those GET /api/mcp-servers offers); null: every server the account may use; []: none. */
  allowed_mcp_servers: z.array(z.string()).nullable().optional(),
});
export type KeyInputJson = z.infer<typeof keyInput>;
