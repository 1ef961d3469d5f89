import { useState, type FormEvent } from 'react';
import { draftNumbers } from '../../ui/draft-numbers';
import type { BudgetPeriod, OfferedGuardrail, Project, ProjectInput } from '../../api/types';
import { formatCost } from '../../format/format';
import { Button } from '../../ui/button';
import { Alert } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';
import { GuardrailPicker } from '../keys/guardrail-picker';

interface Draft {
  name: string;
  quota: string;
  budgetPeriod: BudgetPeriod | '';
  budgetLimit: string;
  rpm: string;
  tpm: string;
  models: string;
  guardrails: string[];
}

const budgetPeriods = [
  { value: '', label: 'No budget' },
  { value: 'day', label: 'Per day' },
  { value: 'week', label: 'Per week' },
  { value: 'month', label: 'Per month' },
];

function draftOf(project: Project | null): Draft {
  return {
    name: project?.name ?? '',
    quota: project?.quota_usd == null ? '' : String(project.quota_usd),
    budgetPeriod: project?.budget?.period ?? '',
    budgetLimit: project?.budget == null ? '' : String(project.budget.limit_usd),
    rpm: project?.rpm == null ? '' : String(project.rpm),
    tpm: project?.tpm == null ? '' : String(project.tpm),
    models: (project?.allowed_models ?? []).join(', '),
    guardrails: project?.guardrails ?? [],
  };
}

function parse(draft: Draft): { input: ProjectInput } | { errors: Partial<Record<keyof Draft, string>> } {
  const errors: Partial<Record<keyof Draft, string>> = {};
  const { money, count } = draftNumbers<keyof Draft>(errors);
  const name = draft.name.trim();
  if (name === '') errors.name = 'Give the project a name.';
  const budgetLimit = draft.budgetPeriod === '' ? null : money('budgetLimit', draft.budgetLimit);
  if (draft.budgetPeriod !== '' && budgetLimit === null) errors.budgetLimit = 'Enter the budget in USD, or choose no budget.';
  const models = draft.models.split(/[\s,]+/).filter((model) => model !== '');
  const input: ProjectInput = {
    name,
    quota_usd: money('quota', draft.quota),
    budget: draft.budgetPeriod === '' || budgetLimit === null ? null : { period: draft.budgetPeriod, limit_usd: budgetLimit },
    rpm: count('rpm', draft.rpm),
    tpm: count('tpm', draft.tpm),
    allowed_models: models.length === 0 ? null : models,
    guardrails: draft.guardrails,
  };
  return Object.keys(errors).length > 0 ? { errors } : { input };
}

interface ProjectFormProps {
  initial: Project | null;
  /** The guardrail policies the operator lets accounts attach. */
  guardrails: OfferedGuardrail[];
  submitLabel: string;
  busy: boolean;
  serverError: string | null;
  onSubmit: (input: ProjectInput) => void;
  onCancel?: () => void;
}

/**
 * A project's name, money limits, rate limits, model allowlist and guardrails; empty fields mean "no limit of its
 * own".
 */
export function ProjectForm({ initial, guardrails, submitLabel, busy, serverError, onSubmit, onCancel }: ProjectFormProps) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial));
  const [errors, setErrors] = useState<Partial<Record<keyof Draft, string>>>({});
  const set = <Field extends keyof Draft>(field: Field, value: Draft[Field]) => setDraft((current) => ({ ...current, [field]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parse(draft);
    if ('errors' in parsed) {
      setErrors(parsed.errors);
      return;
    }
    setErrors({});
    onSubmit(parsed.input);
  };
  return (
    <form className="key-form" onSubmit={submit} noValidate>
      {serverError === null ? null : <Alert tone="error">{serverError}</Alert>}
      <div className="form-grid">
        <TextField label="Name" value={draft.name} onChange={(event) => set('name', event.target.value)} required maxLength={100} error={errors.name} />
        <TextField label="Quota cap (USD)" type="number" inputMode="decimal" min={0} step="0.01" value={draft.quota} onChange={(event) => set('quota', event.target.value)} error={errors.quota} hint="Total all its keys may spend. Empty: no cap." />
        <SelectField label="Budget period" options={budgetPeriods} value={draft.budgetPeriod}
          onChange={(event) => set('budgetPeriod', event.target.value as BudgetPeriod | '')} hint="Resets at 00:00 UTC: every day, every Monday or on the 1st." />
        {draft.budgetPeriod === '' ? null : (
          <TextField label="Budget limit (USD)" type="number" inputMode="decimal" min={0} step="0.01" value={draft.budgetLimit} onChange={(event) => set('budgetLimit', event.target.value)} error={errors.budgetLimit}
            hint={initial?.budget != null && initial.budget.period === draft.budgetPeriod ? `Spent this period: ${formatCost(initial.budget.spent_usd)}.` : 'A new budget or period starts from zero.'} />
        )}
        <TextField label="Requests per minute" type="number" inputMode="numeric" min={1} step={1} value={draft.rpm} onChange={(event) => set('rpm', event.target.value)} error={errors.rpm} hint="For all its keys together." />
        <TextField label="Tokens per minute" type="number" inputMode="numeric" min={1} step={1} value={draft.tpm} onChange={(event) => set('tpm', event.target.value)} error={errors.tpm} />
        <TextField label="Allowed models" value={draft.models} onChange={(event) => set('models', event.target.value)} placeholder="gpt-4o-mini, claude-sonnet-4" hint="Model ids, comma-separated. Empty: every model." />
      </div>
      <GuardrailPicker offered={guardrails} initial={initial?.guardrails ?? []} chosen={draft.guardrails} onChange={(chosen) => set('guardrails', chosen)}
        hint="Checks on the prompts and answers of every key in this project, on top of the account's, the key's and the model's." />
      <div className="form-actions">
        {onCancel === undefined ? null : <Button onClick={onCancel}>Cancel</Button>}
        <Button type="submit" variant="primary" busy={busy}>{submitLabel}</Button>
      </div>
    </form>
  );
}
