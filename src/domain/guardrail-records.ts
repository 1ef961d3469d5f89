/**
 * The stored guardrail policies and which models, accounts, projects and keys they are bound to. A record's kind, mode,
 * direction and settings are checked against the guardrail schemas where policies enter (the admin API) and again
 * where they are compiled (the policy book); storage keeps them as written.
 */
export const GUARDRAIL_SCOPES = ['model', 'account', 'project', 'key'] as const;
export type GuardrailScope = (typeof GUARDRAIL_SCOPES)[number];

/**
 * What an account may do to an operator policy that applies to it, for itself, its projects and keys: `none` (the
 * default) nothing; `relax` lower its mode (block → mask → log; the policy still runs and is reported); `disable`
 * also turn it off.
 */
export const GUARDRAIL_OVERRIDE_RULES = ['none', 'relax', 'disable'] as const;
export type GuardrailOverrideRule = (typeof GUARDRAIL_OVERRIDE_RULES)[number];

/** Where an account's override applies: the whole account, one of its projects or one of its keys. */
export const GUARDRAIL_OVERRIDE_SCOPES = ['account', 'project', 'key'] as const;
export type GuardrailOverrideScope = (typeof GUARDRAIL_OVERRIDE_SCOPES)[number];

/** The mode an account asks for instead of the operator's: off, or a milder mode. */
export const GUARDRAIL_OVERRIDE_MODES = ['off', 'log', 'mask'] as const;
export type GuardrailOverrideMode = (typeof GUARDRAIL_OVERRIDE_MODES)[number];

/** One account's override of one policy at one scope (the target is the account itself, a project or a key of it). */
export interface GuardrailOverride {
  accountId: string;
  scope: GuardrailOverrideScope;
  targetId: string;
  guardrailId: string;
  mode: GuardrailOverrideMode;
  /** the console user who set it (null: set otherwise) */
  setBy: string | null;
  updatedAt: number;
}

export interface GuardrailRecord {
  id: string;
  name: string;
  kind: string;
  mode: string;
  applies_to: string;
  settings?: Record<string, unknown>;
  /** A webhook policy's headers (its credentials): sealed at rest, never shown by the admin API, only names. */
  headers?: Record<string, string>;
  /** Account owners and admins may attach it to their own keys (the operator binds any policy anywhere). */
  accounts_may_use?: boolean;
  /** What accounts may do to it where it applies to them (absent: `none`). */
  accounts_may_override?: GuardrailOverrideRule;
  createdAt: number;
  updatedAt: number;
}

/** The names bound to one model, account, project or key. */
export interface GuardrailBinding {
  scope: GuardrailScope;
  targetId: string;
  names: string[];
}

export interface GuardrailRepository {
  create(record: GuardrailRecord): Promise<void>;
  /** Every policy, by name. */
  list(): Promise<GuardrailRecord[]>;
  getById(id: string): Promise<GuardrailRecord | null>;
  /** Replaces the record's fields (its id and createdAt stay). */
  update(record: GuardrailRecord): Promise<void>;
  delete(id: string): Promise<boolean>;
  listBindings(): Promise<GuardrailBinding[]>;
  /** Sets the names bound to one target; an empty list removes the binding. */
  setBinding(binding: GuardrailBinding, now: number): Promise<void>;
  /** Every account's overrides (accountId given: that account's only). */
  listOverrides(accountId?: string): Promise<GuardrailOverride[]>;
  /** Sets one override (replacing the one of the same scope, target and policy). */
  setOverride(override: GuardrailOverride): Promise<void>;
  /** Clears the account's override of one policy at one scope and target; false when there was none. */
  clearOverride(accountId: string, scope: GuardrailOverrideScope, targetId: string, guardrailId: string): Promise<boolean>;
  /** Clears every override of one policy (it is being deleted), or of one target (a project being deleted). */
  clearOverridesOf(filter: { guardrailId: string } | { scope: GuardrailOverrideScope; targetId: string }): Promise<void>;
}
