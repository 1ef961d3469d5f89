import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { TransactionHistoryJson, TransactionLineJson } from '../../../../src/contract/index.js';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { CurrencySelect, useDisplayCurrency } from '../../format/display-currency';
import { formatDateTime, utcDay } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Card, Loading, PageHeader } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';

/** One line of `GET /api/console/transactions` (docs/console-api.md). */
export type Transaction = TransactionLineJson;

/** The groups a person filters by; a type the console does not know yet falls under "Other". */
const GROUPS: Record<string, string[]> = {
  payments: ['card_top_up', 'card_refund', 'card_dispute', 'refund', 'redemption'],
  operator: ['operator_credit', 'operator_debit', 'plan_grant', 'sign_up_credit', 'sign_up_credit_expired'],
  plans: ['plan_purchase', 'plan_change'],
  referrals: ['referral_reward', 'referral_reversal'],
  usage: ['usage'],
};
const KNOWN = new Set(Object.values(GROUPS).flat());

function inGroup(line: Transaction, group: string): boolean {
  if (group === '') return true;
  if (group === 'other') return !KNOWN.has(line.type);
  return GROUPS[group]?.includes(line.type) ?? false;
}

/** Reasons the gateway writes for itself (`stripe:…`, `plan:…`) are references; an operator's words are shown as said. */
function shownReason(line: Transaction): string | null {
  if (line.reason === null || line.reason === '') return null;
  if (line.type === 'operator_credit' || line.type === 'operator_debit' || !KNOWN.has(line.type)) return line.reason;
  return null;
}

function useTransactions(range: { from: string; to: string }) {
  const api = useApi();
  return useQuery({
    queryKey: ['transactions', range],
    queryFn: () => api.get<TransactionHistoryJson>('/api/console/transactions', {
      from: `${range.from}T00:00:00Z`,
      to: `${range.to}T23:59:59.999Z`,
    }),
  });
}

const DAY_MS = 86_400_000;

/** Every change of the balance, with the balance after it, so a balance that moved always has its reasons. */
export function TransactionsPage() {
  useDocumentTitle('Transactions');
  const display = useDisplayCurrency();
  const today = utcDay(new Date());
  const [draft, setDraft] = useState({ from: utcDay(new Date(Date.now() - 30 * DAY_MS)), to: today });
  const [range, setRange] = useState(draft);
  const [group, setGroup] = useState('');
  const history = useTransactions(range);
  const lines = (history.data?.data ?? []).filter((line) => inGroup(line, group));
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setRange(draft);
  };
  const csv = new URLSearchParams({ from: `${range.from}T00:00:00Z`, to: `${range.to}T23:59:59.999Z` });

  return (
    <div className="page stack">
      <PageHeader title="Transactions" description="Every change of your balance: top-ups, codes, credits and debits with their reason, plans, and each day’s usage." />
      <Card>
        <form className="filters" onSubmit={apply} aria-label="Period">
          <TextField label="From (UTC day)" type="date" value={draft.from} max={draft.to} onChange={(event) => setDraft({ ...draft, from: event.target.value })} />
          <TextField label="To (UTC day)" type="date" value={draft.to} min={draft.from} onChange={(event) => setDraft({ ...draft, to: event.target.value })} />
          <SelectField
            label="Show"
            value={group}
            onChange={(event) => setGroup(event.target.value)}
            options={[
              { value: '', label: 'Everything' }, { value: 'payments', label: 'Top-ups, codes and refunds' }, { value: 'operator', label: 'From the operator' },
              { value: 'plans', label: 'Plans' }, { value: 'referrals', label: 'Referrals' }, { value: 'usage', label: 'Usage' }, { value: 'other', label: 'Other' },
            ]}
          />
          <CurrencySelect display={display} />
          <div className="filter-actions">
            <Button type="submit" variant="primary">Apply</Button>
            <a className="button button-secondary" href={`/api/console/transactions.csv?${csv.toString()}`} download>Export CSV</a>
          </div>
        </form>
      </Card>
      {history.error != null ? <Alert tone="error">{errorMessage(history.error)}</Alert> : null}
      {history.isPending ? <Loading /> : null}
      {history.data === undefined ? null : (
        <>
          <dl className="stat-strip">
            <div className="stat"><dt>Balance at the start</dt><dd data-testid="opening-balance">{display.format(history.data.opening_balance_usd, { precise: true })}</dd></div>
            <div className="stat"><dt>Balance at the end</dt><dd data-testid="closing-balance">{display.format(history.data.closing_balance_usd, { precise: true })}</dd></div>
            <div className="stat"><dt>Change</dt><dd>{display.format((Math.round(history.data.closing_balance_usd * 1e9) - Math.round(history.data.opening_balance_usd * 1e9)) / 1e9, { signed: true, precise: true })}</dd></div>
          </dl>
          {history.data.truncated ? <Alert tone="info">This period has more entries than one page shows: the list starts at {formatDateTime(history.data.from)}. Choose an earlier end date to see the rest.</Alert> : null}
          <Card>
            {lines.length === 0 ? <p className="empty">Nothing in this period.</p> : (
              <div className="table-scroll">
                <table className="table table-cards transactions-table" data-testid="transactions-table">
                  <caption className="visually-hidden">Balance changes, newest first</caption>
                  <thead>
                    <tr><th scope="col">When</th><th scope="col">What</th><th scope="col" className="numeric">Amount</th><th scope="col" className="numeric">Balance after</th></tr>
                  </thead>
                  <tbody>
                    {lines.map((line) => {
                      const reason = shownReason(line);
                      return (
                        <tr key={line.id} data-testid="transaction" data-type={line.type}>
                          <td data-label="When" className="cell-nowrap"><time dateTime={line.at}>{formatDateTime(line.at)}</time></td>
                          <th scope="row" data-label="What">
                            {line.description}
                            {reason === null ? null : <span className="key-meta" data-testid="transaction-reason">“{reason}”</span>}
                            {line.shortfall_usd != null && line.shortfall_usd > 0 ? <span className="key-meta">{display.format(line.shortfall_usd)} more was due than the funds covered</span> : null}
                          </th>
                          <td data-label="Amount" className={`numeric${line.amount_usd > 0 ? ' amount-positive' : ''}`} data-testid="transaction-amount">{display.format(line.amount_usd, { signed: true, precise: true })}</td>
                          <td data-label="Balance after" className="numeric">{display.format(line.balance_after_usd, { precise: true })}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
        </>
      )}
    </div>
  );
}
