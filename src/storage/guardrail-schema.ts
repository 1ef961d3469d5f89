import type { Database } from './database-schema.js';
import type { IntegerColumn } from './schema-columns.js';

/** Tables of guardrails (migration 0036), in the conventions of database-schema.ts. */
export interface GuardrailsTable {
  id: string;
  name: string;
  kind: string;
  mode: string;
  applies_to: string;
  /** The kind's settings as a JSON object, or NULL for none. */
  settings: string | null;
  /** A webhook policy's headers as one sealed JSON object (migration 0043), or NULL for none. */
  headers_sealed: string | null;
  /** 1: account owners and admins may attach the policy to their keys (migration 0044). */
  accounts_may_use: IntegerColumn;
  /** `none`, `relax` or `disable`: what accounts may do to it (migration 0058). */
  accounts_may_override: string;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface GuardrailBindingsTable {
  /** `model`, `account`, `project` or `key` */
  scope: string;
  target_id: string;
  /** JSON array of guardrail names */
  names: string;
  updated_at: IntegerColumn;
}

/** An account's override of one operator policy for itself, a project or a key of it (migration 0058). */
export interface GuardrailOverridesTable {
  account_id: string;
  /** `account`, `project` or `key` */
  scope: string;
  target_id: string;
  guardrail_id: string;
  /** `off`, `log` or `mask` */
  mode: string;
  set_by: string | null;
  updated_at: IntegerColumn;
}

export type GuardrailTables = {
  guardrails: GuardrailsTable;
  guardrail_bindings: GuardrailBindingsTable;
  guardrail_overrides: GuardrailOverridesTable;
};

export type GuardrailDatabase = Database & GuardrailTables;
