/** The stored guardrail policies and which models, accounts and keys they are bound to. */
import type { GuardrailPolicy } from './settings.js';

export const GUARDRAIL_SCOPES = ['model', 'account', 'key'] as const;
export type GuardrailScope = (typeof GUARDRAIL_SCOPES)[number];

export type GuardrailRecord = GuardrailPolicy & { id: string; createdAt: number; updatedAt: number };

/** The names bound to one model, account or key. */
export interface GuardrailBinding {
  scope: GuardrailScope;
  targetId: string;
  names: string[];
}

export interface GuardrailRepository {
  create(record: GuardrailRecord): Promise<void>;
  list(): Promise<GuardrailRecord[]>;
  getById(id: string): Promise<GuardrailRecord | null>;
  /** Replaces the record's fields (its id and createdAt stay). */
  update(record: GuardrailRecord): Promise<void>;
  delete(id: string): Promise<boolean>;
  listBindings(): Promise<GuardrailBinding[]>;
  /** Sets the names bound to one target; an empty list removes the binding. */
  setBinding(binding: GuardrailBinding, now: number): Promise<void>;
}
