import { useState, type FormEvent } from 'react';
import type { BudgetPeriod } from '../../api/types';
import { formatCost } from '../../format/format';
import { Button } from '../../ui/button';
import { draftNumbers } from '../../ui/draft-numbers';
import { Alert } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';
import type { CustomerRule, CustomerRuleInput } from './customer-queries';

interface Draft {
  customer: string;
  budgetPeriod: BudgetPeriod | '';
  budgetLimit: string;
  rpm: string;
  tpm: string;
  concurrency: string;
}

const budgetPeriods = [
  { value: '', label: 'No budget' },
  { value: 'day', label: 'Per day' },
  { value: 'week', label: 'Per week' },
  { value: 'month', label: 'Per month' },
];

function draftOf(rule: CustomerRule | null): Draft {
  return {
    customer: rule?.customer ?? '',
    budgetPeriod: rule?.budget?.period ?? '',
    budgetLimit: rule?.budget == null ? '' : String(rule.budget.limit_usd),
    rpm: rule?.rpm == null ? '' : String(rule.rpm),
    tpm: rule?.tpm == null ? '' : String(rule.tpm),
    concurrency: rule?.concurrency == null ? '' : String(rule.concurrency),
  };
}

function parse(draft: Draft, everyCustomer: boolean): { input: CustomerRuleInput } | { errors: Partial<Record<keyof Draft, string>> } {
  const errors: Partial<Record<keyof Draft, string>> = {};
  const { money, count } = draftNumbers<keyof Draft>(errors);
  const customer = draft.customer.trim();
  if (!everyCustomer && customer === '') errors.customer = 'Name the customer as your requests do (user, metadata.user_id or x-gateway-customer).';
  const budgetLimit = draft.budgetPeriod === '' ? null : money('budgetLimit', draft.budgetLimit);
  if (draft.budgetPeriod !== '' && budgetLimit === null) errors.budgetLimit = 'Enter the budget in USD, or choose no budget.';
  const input: CustomerRuleInput = {
    customer: everyCustomer ? null : customer,
    budget: draft.budgetPeriod === '' || budgetLimit === null ? null : { period: draft.budgetPeriod, limit_usd: budgetLimit },
    rpm: count('rpm', draft.rpm),
    tpm: count('tpm', draft.tpm),
    concurrency: count('concurrency', draft.concurrency),
  };
  return Object.keys(errors).length > 0 ? { errors } : { input };
}

interface CustomerRuleFormProps {
  /** The rule being changed; null: a new one. */
  initial: CustomerRule | null;
  /** The rule of every customer (no customer field). */
  everyCustomer: boolean;
  submitLabel: string;
  busy: boolean;
  serverError: string | null;
  onSubmit: (input: CustomerRuleInput) => void;
  onCancel: () => void;
}

/** One end customer's budget and limits (or every customer's); empty fields mean no such limit. */
export function CustomerRuleForm({ initial, everyCustomer, submitLabel, busy, serverError, onSubmit, onCancel }: CustomerRuleFormProps) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial));
  const [errors, setErrors] = useState<Partial<Record<keyof Draft, string>>>({});
  const set = <Field extends keyof Draft>(field: Field, value: Draft[Field]) => setDraft((current) => ({ ...current, [field]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parse(draft, everyCustomer);
    if ('errors' in parsed) {
      setErrors(parsed.errors);
      return;
    }
    setErrors({});
    onSubmit(parsed.input);
  };
  const spent = initial?.budget?.spent_usd;
  return (
    <form className="key-form" onSubmit={submit} noValidate>
      {serverError === null ? null : <Alert tone="error">{serverError}</Alert>}
      <div className="form-grid">
        {everyCustomer ? null : (
          <TextField label="Customer" value={draft.customer} onChange={(event) => set('customer', event.target.value)} required maxLength={256} error={errors.customer}
            disabled={initial !== null} hint={initial !== null ? 'To rename, add a rule for the new name and remove this one.' : 'As your requests name it: OpenAI user, Anthropic metadata.user_id or the x-gateway-customer header.'} />
        )}
        <SelectField label="Budget period" options={budgetPeriods} value={draft.budgetPeriod}
          onChange={(event) => set('budgetPeriod', event.target.value as BudgetPeriod | '')} hint="Resets at 00:00 UTC: every day, every Monday or on the 1st." />
        {draft.budgetPeriod === '' ? null : (
          <TextField label="Budget limit (USD)" type="number" inputMode="decimal" min={0} step="0.01" value={draft.budgetLimit} onChange={(event) => set('budgetLimit', event.target.value)} error={errors.budgetLimit}
            hint={everyCustomer ? 'Each customer without a rule of its own gets this much.' : spent !== undefined && initial?.budget?.period === draft.budgetPeriod ? `Spent this period: ${formatCost(spent)}.` : 'Counts from the rule\'s first charge.'} />
        )}
        <TextField label="Requests per minute" type="number" inputMode="numeric" min={1} step={1} value={draft.rpm} onChange={(event) => set('rpm', event.target.value)} error={errors.rpm} hint={everyCustomer ? 'For each customer on its own.' : undefined} />
        <TextField label="Tokens per minute" type="number" inputMode="numeric" min={1} step={1} value={draft.tpm} onChange={(event) => set('tpm', event.target.value)} error={errors.tpm} />
        <TextField label="Requests at once" type="number" inputMode="numeric" min={1} step={1} value={draft.concurrency} onChange={(event) => set('concurrency', event.target.value)} error={errors.concurrency} />
      </div>
      <div className="form-actions">
        <Button onClick={onCancel}>Cancel</Button>
        <Button type="submit" variant="primary" busy={busy}>{submitLabel}</Button>
      </div>
    </form>
  );
}
