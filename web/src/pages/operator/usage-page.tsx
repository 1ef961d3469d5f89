import { useState } from 'react';
import { errorMessage } from '../../api/client';
import { formatCost, formatDateTime, formatInteger, formatMilliseconds, localInputToIso } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { HostedTools } from '../usage/usage-table';
import { useOperatorGet } from './operator-queries';
import type { OperatorUsagePage } from '../../api/operator-types';

/** The whole deployment's usage log (metadata only) with the user page's filters, and its CSV export. */
export function OperatorUsagePage() {
  useDocumentTitle('Usage explorer');
  const [filters, setFilters] = useState({ email: '', key: '', channel: '', model: '', status: '', from: '', to: '' });
  const query = {
    email: filters.email.trim(), key: filters.key.trim(), channel: filters.channel.trim(), model: filters.model.trim(), status: filters.status.trim(),
    from: filters.from === '' ? '' : (localInputToIso(filters.from) ?? ''), to: filters.to === '' ? '' : (localInputToIso(filters.to) ?? ''),
  };
  const usage = useOperatorGet<OperatorUsagePage>('usage', { ...query, limit: '100' });
  const search = new URLSearchParams(Object.entries(query).filter(([, value]) => value !== '')).toString();
  const set = (field: keyof typeof filters) => (event: { target: { value: string } }) => setFilters({ ...filters, [field]: event.target.value });
  return (
    <div className="page stack">
      <PageHeader title="Usage explorer" description="Every call through the gateway: metadata only, never prompts or answers."
        actions={<a className="button button-secondary" href={`/api/operator/usage.csv${search === '' ? '' : `?${search}`}`} download>Export CSV</a>} />
      <Card>
        <div className="filter-bar">
          <TextField label="Account email" type="search" value={filters.email} onChange={set('email')} />
          <TextField label="Key name" type="search" value={filters.key} onChange={set('key')} hint="Within the account above." />
          <TextField label="Channel" type="search" value={filters.channel} onChange={set('channel')} hint="Name or id." />
          <TextField label="Model" value={filters.model} onChange={set('model')} />
          <TextField label="Status" value={filters.status} onChange={set('status')} inputMode="numeric" />
          <TextField label="From" type="datetime-local" value={filters.from} onChange={set('from')} />
          <TextField label="To" type="datetime-local" value={filters.to} onChange={set('to')} />
        </div>
        {usage.isPending ? <Loading /> : null}
        {usage.isError ? <Alert tone="error">{errorMessage(usage.error)}</Alert> : null}
        {usage.data?.data.length === 0 ? <p className="empty">No calls match.</p> : null}
        {usage.data === undefined || usage.data.data.length === 0 ? null : (
          <div className="table-scroll"><table className="table table-cards usage-table" data-testid="operator-usage"><caption className="visually-hidden">Calls</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Model</th><th scope="col">Account / key</th><th scope="col">Channel</th><th scope="col">Status</th><th scope="col" className="numeric">Tokens</th><th scope="col" className="numeric">Cost</th><th scope="col" className="numeric">Latency</th></tr></thead>
            <tbody>{usage.data.data.map((row) => (
              <tr key={row.request_id}>
                <td data-label="When" className="cell-nowrap"><time dateTime={row.created_at} title={row.request_id}>{formatDateTime(row.created_at)}</time></td>
                <th scope="row" data-label="Model"><span className="mono usage-model">{row.model ?? '—'}</span><span className="key-meta usage-endpoint">{row.endpoint}</span></th>
                <td data-label="Account / key">
                  <span title={row.account_id ?? undefined}>{row.account_email ?? row.account_id ?? '—'}</span>
                  <span className="key-meta" title={row.key_id ?? undefined}>{row.key_name ?? row.key_id ?? ''}</span>
                </td>
                <td data-label="Channel"><span title={row.channel_id ?? undefined}>{row.channel_name ?? row.channel_id ?? '—'}</span></td>
                <td data-label="Status"><Badge tone={row.status < 400 ? 'success' : 'danger'}>{row.status}</Badge>{row.error_code === null ? null : <span className="key-meta">{row.error_code}</span>}</td>
                <td data-label="Tokens" className="numeric">{formatInteger(row.total_tokens)}</td>
                <td data-label="Cost" className="numeric">{formatCost(row.cost_usd)}<HostedTools row={row} /></td>
                <td data-label="Latency" className="numeric">{formatMilliseconds(row.latency_ms)}</td>
              </tr>
            ))}</tbody></table></div>
        )}
      </Card>
    </div>
  );
}
