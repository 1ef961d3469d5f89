import { useState } from 'react';
import { formatCost, formatDateTime } from '../../format/format';
import { Button } from '../../ui/button';
import { SelectField } from '../../ui/field';
import { Alert, Loading } from '../../ui/feedback';
import { errorMessage } from '../../api/client';
import type { AdminLedgerPage } from '../../api/operator-types';
import { useOperatorGet } from './operator-queries';

const PAGE_SIZE = '25';
const KINDS = [
  { value: '', label: 'Every kind' },
  { value: 'topup,correction', label: 'Credits and debits' },
  { value: 'refund', label: 'Refunds' },
  { value: 'usage', label: 'Usage' },
  { value: 'subscription,subscription_grant', label: 'Plans' },
  { value: 'referral', label: 'Referral rewards' },
];

/** An account's ledger for operators: newest first, a page at a time, filtered by kind. */
export function AccountLedger({ path, email }: { path: string; email: string }) {
  const [kind, setKind] = useState('');
  // The cursors of the pages before this one, so "Newer" steps back.
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const ledger = useOperatorGet<AdminLedgerPage>(`${path}/ledger`, { order: 'desc', limit: PAGE_SIZE, kind: kind === '' ? undefined : kind, cursor: cursor ?? undefined });
  const page = ledger.data;
  return (
    <div className="stack" data-testid="account-ledger">
      <div className="inline-form">
        <SelectField label="Ledger entries" value={kind} onChange={(event) => { setKind(event.target.value); setCursors([null]); }} options={KINDS} />
      </div>
      {ledger.isPending ? <Loading /> : null}
      {ledger.error != null ? <Alert tone="error">{errorMessage(ledger.error)}</Alert> : null}
      {page?.data.length === 0 ? <p className="empty">No entries.</p> : null}
      {page === undefined || page.data.length === 0 ? null : (
        <div className="table-scroll"><table className="table table-cards"><caption className="visually-hidden">Ledger of {email}, newest first</caption>
          <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col" className="numeric">Amount</th><th scope="col">Reason</th></tr></thead>
          <tbody>{page.data.map((entry) => (
            <tr key={entry.id} data-testid="ledger-entry">
              <td data-label="When" className="cell-nowrap">{formatDateTime(entry.created_at)}</td>
              <td data-label="What">{entry.description ?? entry.kind}<span className="key-meta">{entry.kind}{entry.request_id == null ? '' : ` · ${entry.request_id}`}</span></td>
              <td data-label="Amount" className="numeric">{formatCost(entry.amount_usd)}</td>
              <td data-label="Reason">{entry.reason ?? ''}</td>
            </tr>
          ))}</tbody></table></div>
      )}
      <div className="form-actions">
        <Button disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>Newer</Button>
        <Button disabled={page?.has_more !== true} onClick={() => { if (page?.next_cursor != null) setCursors([...cursors, page.next_cursor]); }}>Older</Button>
      </div>
    </div>
  );
}
