import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import type { AdminListPage, Tier } from '../../api/operator-types';
import { formatInteger, formatUsd } from '../../format/format';
import { Button } from '../../ui/button';
import { TextField } from '../../ui/field';
import { Alert, Card, Loading } from '../../ui/feedback';
import { useOperatorAction, useOperatorGet } from './operator-queries';

const text = (value: number | null): string => (value === null ? '' : String(value));
const numberOrNull = (value: string): number | null => (value.trim() === '' ? null : Number(value));

/** One tier's limits and sign-up credit; a save sends only the fields changed. */
function TierForm({ tier, onDone }: { tier: Tier; onDone: () => void }) {
  const action = useOperatorAction();
  const initial = { rpm: text(tier.rpm), tpm: text(tier.tpm), credit: text(tier.signup_credit_usd), days: text(tier.signup_credit_days) };
  const [form, setForm] = useState(initial);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body: Record<string, unknown> = {};
    if (form.rpm !== initial.rpm) body.rpm = numberOrNull(form.rpm);
    if (form.tpm !== initial.tpm) body.tpm = numberOrNull(form.tpm);
    if (form.credit !== initial.credit) body.signup_credit_usd = form.credit.trim() === '' ? null : form.credit.trim();
    if (form.days !== initial.days) body.signup_credit_days = numberOrNull(form.days);
    if (Object.keys(body).length === 0) {
      onDone();
      return;
    }
    action.mutate({ method: 'PATCH', path: `admin/tiers/${encodeURIComponent(tier.name)}`, body }, { onSuccess: onDone });
  };
  return (
    <form className="stack" onSubmit={submit} aria-label={`Tier ${tier.name}`}>
      <div className="form-grid">
        <TextField label="Requests per minute" type="number" min={1} value={form.rpm} onChange={(event) => setForm({ ...form, rpm: event.target.value })} placeholder="Unlimited" />
        <TextField label="Tokens per minute" type="number" min={1} value={form.tpm} onChange={(event) => setForm({ ...form, tpm: event.target.value })} placeholder="Unlimited" />
        <TextField label="Sign-up credit (USD)" value={form.credit} inputMode="decimal" pattern="[0-9]*(\.[0-9]+)?" onChange={(event) => setForm({ ...form, credit: event.target.value })}
          placeholder="The gateway's" hint="Given once per person when a console sign-up verifies its email; 0 turns it off for this tier." />
        <TextField label="Sign-up credit lasts (days)" type="number" min={1} max={3650} value={form.days} onChange={(event) => setForm({ ...form, days: event.target.value })}
          placeholder="The gateway's" hint="What is left of it is taken back then." />
      </div>
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions"><Button onClick={onDone}>Cancel</Button><Button variant="primary" type="submit" busy={action.isPending}>Save tier</Button></div>
    </form>
  );
}

/** Account tiers: the per-account limits and the sign-up credit each gives (empty: the gateway's settings). */
export function TiersCard({ writable }: { writable: boolean }) {
  const tiers = useOperatorGet<AdminListPage<Tier>>('admin/tiers', { limit: '100' });
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <Card title="Tiers and sign-up credit">
      <p className="field-hint">Every account has a tier (new ones: <span className="mono">default</span>). A tier without its own sign-up credit gives the gateway&apos;s (SIGNUP_CREDIT_USD, off unless set).</p>
      {tiers.isPending ? <Loading /> : null}
      {tiers.isError ? <Alert tone="error">{errorMessage(tiers.error)}</Alert> : null}
      {tiers.data === undefined ? null : (
        <div className="table-scroll"><table className="table table-cards" data-testid="tiers-table"><caption className="visually-hidden">Tiers</caption>
          <thead><tr><th scope="col">Tier</th><th scope="col" className="numeric">RPM</th><th scope="col" className="numeric">TPM</th><th scope="col" className="numeric">Sign-up credit</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>{tiers.data.data.map((tier) => (
            <tr key={tier.name}>
              <th scope="row" className="mono">{tier.name}</th>
              <td data-label="RPM" className="numeric">{tier.rpm === null ? 'Unlimited' : formatInteger(tier.rpm)}</td>
              <td data-label="TPM" className="numeric">{tier.tpm === null ? 'Unlimited' : formatInteger(tier.tpm)}</td>
              <td data-label="Sign-up credit" className="numeric">{tier.signup_credit_usd === null ? <span className="field-hint">the gateway&apos;s</span> : formatUsd(tier.signup_credit_usd)}{tier.signup_credit_days === null ? '' : `, ${tier.signup_credit_days} days`}</td>
              <td className="cell-actions">{writable ? <Button variant="ghost" onClick={() => setEditing(editing === tier.name ? null : tier.name)} aria-label={`Edit tier ${tier.name}`}>Edit</Button> : null}</td>
            </tr>
          ))}</tbody></table></div>
      )}
      {editing === null ? null : (() => {
        const tier = tiers.data?.data.find((entry) => entry.name === editing);
        return tier === undefined ? null : <TierForm key={tier.name} tier={tier} onDone={() => setEditing(null)} />;
      })()}
    </Card>
  );
}
