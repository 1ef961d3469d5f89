import { z } from 'zod';
import { isoTime } from './common.js';

export const guardrailOverrideMode = z.enum(['off', 'log', 'mask']);
export const guardrailOverrideScope = z.enum(['account', 'project', 'key']);

/** One override the account set: where (the account itself, a project or a key), the mode, and whether it applies now. */
export const accountGuardrailOverride = z.strictObject({
  scope: guardrailOverrideScope,
  id: z.string(),
  mode: guardrailOverrideMode,
  /** false: the operator no longer allows it (or changed the policy so it is not milder), so the policy runs as set */
  applied: z.boolean(),
  updated_at: isoTime,
});
export type AccountGuardrailOverrideJson = z.infer<typeof accountGuardrailOverride>;

/**
 * GET /api/guardrail-overrides: an operator policy that applies to the account's requests (names and what they do,
 * never settings), where it applies, what the account may do to it and what it did.
 */
export const accountGuardrail = z.strictObject({
  name: z.string(),
  kind: z.string(),
  mode: z.string(),
  applies_to: z.string(),
  accounts_may_override: z.enum(['none', 'relax', 'disable']),
  /** the modes the account may choose now, mildest first (empty: it cannot change this policy) */
  allowed_modes: z.array(guardrailOverrideMode),
  /** where the operator (or the account) bound it: every request to some models, the account, its projects, its keys */
  applies_on: z.strictObject({ models: z.boolean(), account: z.boolean(), projects: z.array(z.string()), keys: z.array(z.string()) }),
  overrides: z.array(accountGuardrailOverride),
});
export type AccountGuardrailJson = z.infer<typeof accountGuardrail>;
export const accountGuardrailList = z.strictObject({ data: z.array(accountGuardrail) });
export type AccountGuardrailListJson = z.infer<typeof accountGuardrailList>;
