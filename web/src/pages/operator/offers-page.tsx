import { useState, type FormEvent } from 'react';
import { csvLine } from '../../../../src/shared/csv';
import { errorMessage } from '../../api/client';
import type { AdminListPage, AdminPlan, Announcement, RedemptionCode } from '../../api/operator-types';
import { formatDateTime, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { SelectField, TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';
import { TiersCard } from './tiers-card';

/** Downloads the codes of a batch as CSV; the plaintext codes exist only in the answer that made them. */
function downloadCodes(codes: RedemptionCode[]): void {
  const csv = ['code,amount_usd,name,id\r\n', ...codes.map((code) => csvLine([code.code ?? '', code.amount_usd, code.name, code.id]))].join('');
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `redemption-codes-${new Date().toISOString().slice(0, 10)}.csv`;
  link.click();
  URL.revokeObjectURL(url);
}

function PlansCard({ writable }: { writable: boolean }) {
  const plans = useOperatorGet<AdminListPage<AdminPlan>>('admin/plans', { limit: '200' });
  const action = useOperatorAction();
  const empty = { name: '', period: 'month', quota: '', price: '', selfService: false };
  const [form, setForm] = useState(empty);
  const create = (event: FormEvent) => {
    event.preventDefault();
    const body = { name: form.name, period: form.period, quota_usd: form.quota, overage: { policy: 'deny' }, self_service: form.selfService, price_usd: form.price === '' ? '0' : form.price };
    action.mutate({ method: 'POST', path: 'admin/plans', body }, { onSuccess: () => setForm(empty) });
  };
  // Offering a plan in the console, or withdrawing it, changes only what accounts may choose from now on.
  const offer = (plan: AdminPlan, selfService: boolean) => action.mutate({ method: 'PATCH', path: `admin/plans/${plan.id}`, body: { self_service: selfService } });
  return (
    <Card title="Plans">
      {plans.isPending ? <Loading /> : null}
      {plans.isError ? <Alert tone="error">{errorMessage(plans.error)}</Alert> : null}
      {plans.data?.data.length === 0 ? <p className="empty">No plans.</p> : null}
      {plans.data === undefined || plans.data.data.length === 0 ? null : (
        <div className="table-scroll"><table className="table table-cards" data-testid="plans-table"><caption className="visually-hidden">Plans</caption>
          <thead><tr><th scope="col">Plan</th><th scope="col">Period</th><th scope="col" className="numeric">Quota</th><th scope="col" className="numeric">Price</th><th scope="col">Over the quota</th><th scope="col">In the console</th></tr></thead>
          <tbody>{plans.data.data.map((plan) => (
            <tr key={plan.id}>
              <th scope="row">{plan.name}</th><td data-label="Period">{plan.period}</td><td data-label="Quota" className="numeric">{formatUsd(plan.quota_usd)}</td>
              <td data-label="Price" className="numeric">{plan.price_usd === 0 ? 'free' : formatUsd(plan.price_usd)}</td><td data-label="Over the quota">{plan.overage.policy}</td>
              <td data-label="In the console">
                {plan.self_service ? <Badge tone="success">offered</Badge> : <Badge tone="neutral">operator only</Badge>}
                {writable ? (
                  <Button variant="ghost" onClick={() => offer(plan, !plan.self_service)} busy={action.isPending} aria-label={`${plan.self_service ? 'Withdraw' : 'Offer'} ${plan.name} in the console`}>
                    {plan.self_service ? 'Withdraw' : 'Offer'}
                  </Button>
                ) : null}
              </td>
            </tr>
          ))}</tbody></table></div>
      )}
      {writable ? (
        <form className="stack" onSubmit={create} aria-label="New plan">
          <div className="form-grid">
            <TextField label="Plan name" value={form.name} onChange={(event) => setForm({ ...form, name: event.target.value })} required maxLength={100} />
            <SelectField label="Period" value={form.period} onChange={(event) => setForm({ ...form, period: event.target.value })} options={['day', 'week', 'month'].map((value) => ({ value, label: value }))} />
            <TextField label="Quota (USD)" value={form.quota} onChange={(event) => setForm({ ...form, quota: event.target.value })} required inputMode="decimal" />
            <TextField label="Price per period (USD)" hint="Whole cents; empty or 0 is free." value={form.price} onChange={(event) => setForm({ ...form, price: event.target.value })} inputMode="decimal" />
          </div>
          <label className="checkbox-row">
            <input type="checkbox" checked={form.selfService} onChange={(event) => setForm({ ...form, selfService: event.target.checked })} />
            Accounts may choose it in the console, paying the price from their balance each period
          </label>
          {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
          <div className="form-actions"><Button variant="primary" type="submit" busy={action.isPending}>Create plan</Button></div>
        </form>
      ) : null}
    </Card>
  );
}

function CodesCard({ writable }: { writable: boolean }) {
  const codes = useOperatorGet<AdminListPage<RedemptionCode>>('admin/redemption-codes', { limit: '100' });
  const action = useOperatorAction<AdminListPage<RedemptionCode>>();
  const [form, setForm] = useState({ amount: '', count: '10', name: '' });
  const [batch, setBatch] = useState<RedemptionCode[] | null>(null);
  const generate = (event: FormEvent) => {
    event.preventDefault();
    action.mutate({ method: 'POST', path: 'admin/redemption-codes', body: { amount_usd: form.amount, count: Number(form.count), ...(form.name === '' ? {} : { name: form.name }) } }, { onSuccess: (result) => setBatch(result.data) });
  };
  return (
    <Card title="Redemption codes">
      {writable ? (
        <form className="stack" onSubmit={generate} aria-label="Generate codes">
          <div className="form-grid">
            <TextField label="Amount per code (USD)" value={form.amount} onChange={(event) => setForm({ ...form, amount: event.target.value })} required inputMode="decimal" />
            <TextField label="How many" type="number" min={1} max={1000} value={form.count} onChange={(event) => setForm({ ...form, count: event.target.value })} required />
            <TextField label="Batch name" value={form.name} onChange={(event) => setForm({ ...form, name: event.target.value })} maxLength={100} />
          </div>
          {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
          <div className="form-actions"><Button variant="primary" type="submit" busy={action.isPending}>Generate</Button></div>
        </form>
      ) : null}
      {codes.isPending ? <Loading /> : null}
      {codes.isError ? <Alert tone="error">{errorMessage(codes.error)}</Alert> : null}
      {codes.data?.data.length === 0 ? <p className="empty">No codes yet.</p> : null}
      {codes.data === undefined || codes.data.data.length === 0 ? null : (
        <div className="table-scroll"><table className="table table-cards" data-testid="codes-table"><caption className="visually-hidden">Redemption codes</caption>
          <thead><tr><th scope="col">Code</th><th scope="col" className="numeric">Amount</th><th scope="col">State</th><th scope="col">Redeemed</th></tr></thead>
          <tbody>{codes.data.data.map((code) => (
            <tr key={code.id}>
              <th scope="row" className="mono">{code.hint}<span className="key-meta">{code.name}</span></th>
              <td data-label="Amount" className="numeric">{formatUsd(code.amount_usd)}</td>
              <td data-label="State"><Badge tone={code.state === 'active' ? 'success' : code.state === 'redeemed' ? 'info' : 'neutral'}>{code.state}</Badge></td>
              <td data-label="Redeemed" className="wrap-anywhere">{code.redeemed_by === null ? '—' : <>{code.redeemed_by}<span className="key-meta">{formatDateTime(code.redeemed_at)}</span></>}</td>
            </tr>
          ))}</tbody></table></div>
      )}
      <Dialog open={batch !== null} title="New redemption codes" onClose={() => setBatch(null)}>
        {batch === null ? null : (
          <div className="stack">
            <Alert tone="warning">These codes are shown once. Download them now; only their hashes are kept.</Alert>
            <ul className="thread mono" aria-label="New codes">{batch.slice(0, 20).map((code) => <li key={code.id}>{code.code}</li>)}</ul>
            {batch.length > 20 ? <p className="field-hint">…and {batch.length - 20} more in the CSV.</p> : null}
            <div className="form-actions"><Button onClick={() => setBatch(null)}>Done</Button><Button variant="primary" onClick={() => downloadCodes(batch)}>Download CSV</Button></div>
          </div>
        )}
      </Dialog>
    </Card>
  );
}

function AnnouncementsCard({ writable }: { writable: boolean }) {
  const announcements = useOperatorGet<AdminListPage<Announcement>>('admin/announcements', { limit: '100' });
  const action = useOperatorAction();
  const [form, setForm] = useState({ title: '', body: '', level: 'info' });
  const publish = (event: FormEvent) => {
    event.preventDefault();
    action.mutate({ method: 'POST', path: 'admin/announcements', body: form }, { onSuccess: () => setForm({ title: '', body: '', level: 'info' }) });
  };
  return (
    <Card title="Announcements">
      <p className="field-hint">Shown on the console and in <code>/api/public/announcements</code>.</p>
      {announcements.isPending ? <Loading /> : null}
      {announcements.isError ? <Alert tone="error">{errorMessage(announcements.error)}</Alert> : null}
      {announcements.data?.data.length === 0 ? <p className="empty">No announcements.</p> : null}
      {announcements.data === undefined || announcements.data.data.length === 0 ? null : (
        <div className="table-scroll"><table className="table table-cards" data-testid="announcements-table"><caption className="visually-hidden">Announcements</caption>
          <thead><tr><th scope="col">Title</th><th scope="col">Level</th><th scope="col">Published</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>{announcements.data.data.map((item) => (
            <tr key={item.id}>
              <th scope="row">{item.title}<span className="key-meta">{item.body}</span></th>
              <td data-label="Level"><Badge tone={item.level === 'critical' ? 'danger' : item.level === 'warning' ? 'warning' : 'info'}>{item.level}</Badge></td>
              <td data-label="Published">{formatDateTime(item.published_at)}{item.expires_at === null ? '' : ` – ${formatDateTime(item.expires_at)}`}</td>
              <td className="cell-actions">{writable ? <Button variant="danger" onClick={() => action.mutate({ method: 'DELETE', path: `admin/announcements/${encodeURIComponent(item.id)}` })} aria-label={`Delete ${item.title}`}>Delete</Button> : null}</td>
            </tr>
          ))}</tbody></table></div>
      )}
      {writable ? (
        <form className="stack" onSubmit={publish} aria-label="New announcement">
          <div className="form-grid">
            <TextField label="Title" value={form.title} onChange={(event) => setForm({ ...form, title: event.target.value })} required maxLength={200} />
            <SelectField label="Level" value={form.level} onChange={(event) => setForm({ ...form, level: event.target.value })} options={['info', 'warning', 'critical'].map((value) => ({ value, label: value }))} />
          </div>
          <div className="field"><label htmlFor="announcement-body">Text</label><textarea id="announcement-body" rows={3} value={form.body} onChange={(event) => setForm({ ...form, body: event.target.value })} maxLength={10_000} /></div>
          {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
          <div className="form-actions"><Button variant="primary" type="submit" busy={action.isPending}>Publish</Button></div>
        </form>
      ) : null}
    </Card>
  );
}

/** Plans, redemption codes (batches, CSV, who redeemed), announcements, and tiers with their sign-up credit. */
export function OperatorOffersPage() {
  useDocumentTitle('Plans, codes and announcements');
  const me = useOperatorMe();
  const writable = canWrite(me.data);
  return (
    <div className="page stack">
      <PageHeader title="Plans, codes and announcements" description="Subscription plans, prepaid redemption codes in batches, and notices to every user." />
      <PlansCard writable={writable} />
      <CodesCard writable={writable} />
      <AnnouncementsCard writable={writable} />
      <TiersCard writable={writable} />
    </div>
  );
}
