import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router-dom';
import { useSession } from '../../api/api-context';
import { ApiError, errorMessage } from '../../api/client';
import type { Billing, BillingProfile } from '../../api/money-types';
import { formatDate, formatDateTime, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { FieldFrame, TextField } from '../../ui/field';
import { useBilling, useBillingProfile, useCheckout, useFx, useInvoices, useRedeem, useSaveProfile } from './billing-queries';

const SHOWN_CURRENCIES = ['JPY', 'CNY', 'EUR'] as const;

/** Roles that top up, redeem and edit the billing details (the API enforces the same). */
export function canWriteBilling(role: string | null | undefined): boolean {
  return role === 'owner' || role === 'admin' || role === 'billing';
}

function BalanceStrip({ billing }: { billing: Billing }) {
  const fx = useFx();
  const rates = fx.data?.rates ?? null;
  return (
    <dl className="stat-strip">
      <div className="stat">
        <dt>Balance</dt>
        <dd data-testid="balance">{formatUsd(billing.balance_usd)}{billing.can_spend ? null : <span className="stat-note">Top up to make requests again</span>}</dd>
      </div>
      {SHOWN_CURRENCIES.map((currency) => {
        const rate = rates?.[currency];
        const value = rate === undefined ? null : new Intl.NumberFormat('en-US', { style: 'currency', currency, maximumFractionDigits: currency === 'JPY' ? 0 : 2 }).format(billing.balance_usd * rate);
        return (
          <div className="stat" key={currency}>
            <dt>In {currency}</dt>
            <dd>{value ?? '—'}<span className="stat-note">{fx.data?.as_of == null ? 'No exchange rates published yet' : `Rate as of ${formatDateTime(fx.data.as_of)}`}</span></dd>
          </div>
        );
      })}
    </dl>
  );
}

function TopUpCard({ billing }: { billing: Billing }) {
  const checkout = useCheckout();
  const card = billing.card;
  const [amount, setAmount] = useState(card.enabled ? String(card.presets_usd[0] ?? card.min_usd) : '');
  if (!card.enabled) {
    return (
      <Card title="Top up by card">
        <Alert tone="info">Card payments are not available on this gateway yet. {card.how_to_enable} Until then, redeem a code below or ask the operator for credit.</Alert>
      </Card>
    );
  }
  const value = Number(amount);
  const outOfBounds = amount !== '' && (!Number.isFinite(value) || value < card.min_usd || value > card.max_usd);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (outOfBounds || amount === '') return;
    checkout.mutate(value, { onSuccess: (opened) => window.location.assign(opened.url) });
  };
  return (
    <Card title="Top up by card">
      <form className="stack" onSubmit={submit} noValidate>
        {checkout.isError ? <Alert tone="error">{errorMessage(checkout.error)}</Alert> : null}
        <div className="preset-row" role="group" aria-label="Preset amounts">
          {card.presets_usd.map((preset) => (
            <Button key={preset} variant={Number(amount) === preset ? 'primary' : 'secondary'} aria-pressed={Number(amount) === preset} onClick={() => setAmount(String(preset))}>{formatUsd(preset)}</Button>
          ))}
        </div>
        <div className="inline-form">
          <TextField label="Amount (USD)" name="amount" inputMode="decimal" value={amount} onChange={(event) => setAmount(event.target.value.trim())}
            error={outOfBounds ? `Between ${formatUsd(card.min_usd)} and ${formatUsd(card.max_usd)}.` : null} />
          <Button type="submit" variant="primary" busy={checkout.isPending} disabled={outOfBounds || amount === ''}>Pay by card</Button>
        </div>
        <p className="field-hint">
          From {formatUsd(card.min_usd)} to {formatUsd(card.max_usd)}{card.tax === null ? '' : `, plus ${card.tax.label} ${card.tax.rate_percent}%`}.
          You pay on Stripe&apos;s page and come back here; the balance rises once Stripe confirms the payment, and an invoice appears below.</p>
      </form>
    </Card>
  );
}

function RedeemCard() {
  const redeem = useRedeem();
  const [code, setCode] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    redeem.mutate(code, { onSuccess: () => setCode('') });
  };
  return (
    <Card title="Redeem a code">
      <form className="inline-form" onSubmit={submit} noValidate>
        <TextField label="Redemption code" name="redemption-code" value={code} onChange={(event) => setCode(event.target.value)} autoComplete="off" spellCheck={false} required />
        <Button type="submit" busy={redeem.isPending} disabled={code.trim() === ''}>Redeem</Button>
      </form>
      {redeem.isError ? <Alert tone="error">{errorMessage(redeem.error)}</Alert> : null}
      {redeem.isSuccess ? <Alert tone="success">{formatUsd(redeem.data.amount_usd)} added. The balance is now {formatUsd(redeem.data.balance_usd)}.</Alert> : null}
    </Card>
  );
}

function ProfileForm({ profile, editable }: { profile: BillingProfile; editable: boolean }) {
  const save = useSaveProfile();
  const [name, setName] = useState(profile.name ?? '');
  const [address, setAddress] = useState(profile.address ?? '');
  const [country, setCountry] = useState(profile.country ?? '');
  const [taxId, setTaxId] = useState(profile.tax_id ?? '');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ name, address, country, tax_id: taxId.trim() === '' ? null : taxId });
  };
  return (
    <form className="stack" onSubmit={submit} noValidate>
      {save.isError ? <Alert tone="error">{errorMessage(save.error)}</Alert> : null}
      {save.isSuccess ? <Alert tone="success">Saved. New invoices carry these details; issued ones stay as they were.</Alert> : null}
      <div className="form-grid">
        <TextField label="Name or company" name="billing-name" value={name} onChange={(event) => setName(event.target.value)} autoComplete="organization" required disabled={!editable} />
        <TextField label="Country (two letters)" name="billing-country" value={country} onChange={(event) => setCountry(event.target.value)} autoComplete="country" maxLength={2} required disabled={!editable} />
        <TextField label="Tax id (optional)" name="billing-tax-id" value={taxId} onChange={(event) => setTaxId(event.target.value)} disabled={!editable} />
      </div>
      <FieldFrame label="Address">
        {({ inputId, describedBy }) => <textarea id={inputId} aria-describedby={describedBy} name="billing-address" rows={3} value={address} onChange={(event) => setAddress(event.target.value)} autoComplete="street-address" required disabled={!editable} />}
      </FieldFrame>
      {editable ? <div className="form-actions"><Button type="submit" variant="primary" busy={save.isPending}>Save billing details</Button></div> : null}
    </form>
  );
}

function ProfileCard({ editable }: { editable: boolean }) {
  const profile = useBillingProfile();
  return (
    <Card title="Billing details">
      <p className="field-hint">Printed on your invoices as the buyer.</p>
      {profile.isPending ? <Loading /> : profile.isError ? <Alert tone="error">{errorMessage(profile.error)}</Alert> : <ProfileForm profile={profile.data} editable={editable} />}
    </Card>
  );
}

function InvoicesCard() {
  const invoices = useInvoices();
  return (
    <Card title="Invoices">
      {invoices.isPending ? <Loading /> : invoices.isError ? <Alert tone="error">{errorMessage(invoices.error)}</Alert> : invoices.data.data.length === 0 ? (
        <p className="empty">No invoices yet. Each paid card top-up and each paid plan period has one.</p>
      ) : (
        <div className="table-scroll">
          <table className="table table-cards" data-testid="invoices-table">
            <thead><tr><th scope="col">Number</th><th scope="col">For</th><th scope="col">Issued</th><th scope="col" className="numeric">Total</th><th scope="col"><span className="visually-hidden">Download</span></th></tr></thead>
            <tbody>
              {invoices.data.data.map((invoice) => (
                <tr key={invoice.id}>
                  <th scope="row" className="no-wrap">
                    {invoice.number} {invoice.object === 'credit_note' ? <Badge tone="warning">credit note</Badge> : null}
                  </th>
                  <td data-label="For">{invoice.lines[0]?.description ?? ''}</td>
                  <td data-label="Issued" className="no-wrap">{formatDate(invoice.issued_at)}</td>
                  <td data-label="Total" className="numeric">{formatUsd(invoice.total_usd)}</td>
                  <td className="cell-actions"><a className="button" href={invoice.pdf_url} download={`${invoice.number}.pdf`}>PDF<span className="visually-hidden"> of {invoice.number}</span></a></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

const TOP_UP_TONES: Record<string, 'neutral' | 'success' | 'info'> = { open: 'info', paid: 'success', expired: 'neutral' };

function TopUpsCard({ billing }: { billing: Billing }) {
  if (billing.recent_top_ups.length === 0) return null;
  return (
    <Card title="Recent card top-ups">
      <div className="table-scroll">
        <table className="table table-cards">
          <thead><tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col" className="numeric">Credit</th><th scope="col" className="numeric">Paid</th></tr></thead>
          <tbody>
            {billing.recent_top_ups.map((topUp) => (
              <tr key={topUp.id}>
                <td data-label="Started">{formatDateTime(topUp.created_at)}</td>
                <td data-label="Status"><Badge tone={TOP_UP_TONES[topUp.status] ?? 'neutral'}>{topUp.status === 'open' ? 'awaiting payment' : topUp.status}</Badge></td>
                <td data-label="Credit" className="numeric">{formatUsd(topUp.amount_usd)}</td>
                <td data-label="Paid" className="numeric">{formatUsd(topUp.total_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Card>
  );
}

export function BillingPage() {
  useDocumentTitle('Billing');
  const session = useSession();
  const [searchParams] = useSearchParams();
  const returned = searchParams.get('checkout');
  const billing = useBilling(returned === 'success');
  const editable = canWriteBilling(session.data?.role);
  if (billing.isError && billing.error instanceof ApiError && billing.error.status === 403) {
    return (
      <div className="page stack">
        <PageHeader title="Billing" />
        <Alert tone="info">Your role ({session.data?.role ?? 'member'}) does not include billing. An owner or admin of the account can change that on the Members page.</Alert>
      </div>
    );
  }
  return (
    <div className="page stack">
      <PageHeader title="Billing" description="Balance, top-ups, billing details and invoices of this account." />
      {returned === 'success' ? <Alert tone="success">Payment received. The balance rises as soon as Stripe confirms it; this page updates by itself.</Alert> : null}
      {returned === 'cancelled' ? <Alert tone="info">The payment was cancelled; nothing was charged.</Alert> : null}
      {billing.isPending ? <Loading /> : billing.isError ? <Alert tone="error">{errorMessage(billing.error)}</Alert> : (
        <>
          <BalanceStrip billing={billing.data} />
          {editable ? <TopUpCard billing={billing.data} /> : null}
          {editable ? <RedeemCard /> : null}
          <TopUpsCard billing={billing.data} />
        </>
      )}
      <ProfileCard editable={editable} />
      <InvoicesCard />
    </div>
  );
}
