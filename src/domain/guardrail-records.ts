/**
 * The stored guardrail policies and which models, accounts, projects and keys they are bound to. A record's kind, mode,
 * direction and settings are checked against the guardrail schemas where policies enter (the admin API) and again
 * where they are compiled (the policy book); storage keeps them as written.
 */
export const GUARDRAIL_SCOPES = ['model', 'account', 'project', 'key'] as const;
export type GuardrailScope = (typeof GUARDRAIL_SCOPES)[number];

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
}
