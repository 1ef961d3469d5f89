import { useState } from 'react';
import { errorMessage } from '../../api/client';
import type { AdminListPage, AuditEntry } from '../../api/operator-types';
import { formatDateTime } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { TextField } from '../../ui/field';
import { Alert, Card, Loading, PageHeader } from '../../ui/feedback';
import { useOperatorGet } from './operator-queries';
import { AuditChanges } from './audit-changes';

/** Every change operators made: who, what, the state before and after (secrets removed), and from where. */
export function OperatorAuditPage() {
  useDocumentTitle('Audit log');
  const [search, setSearch] = useState('');
  const audit = useOperatorGet<AdminListPage<AuditEntry>>('audit', { q: search, limit: '100' });
  const csv = `/api/operator/audit.csv${search === '' ? '' : `?q=${encodeURIComponent(search)}`}`;
  return (
    <div className="page stack">
      <PageHeader title="Audit log" description="Every change made through the operator console, newest first. Secrets are never recorded."
        actions={<a className="button button-secondary" href={csv} download>Export CSV</a>} />
      <Card>
        <TextField label="Filter by action or target" type="search" value={search} onChange={(event) => setSearch(event.target.value)} />
        {audit.isPending ? <Loading /> : null}
        {audit.isError ? <Alert tone="error">{errorMessage(audit.error)}</Alert> : null}
        {audit.data?.data.length === 0 ? <p className="empty">Nothing recorded yet.</p> : null}
        {audit.data === undefined || audit.data.data.length === 0 ? null : (
          <div className="table-scroll"><table className="table table-cards" data-testid="audit-table"><caption className="visually-hidden">Audit log</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Changes (before → after)</th><th scope="col">IP</th></tr></thead>
            <tbody>{audit.data.data.map((entry) => (
              <tr key={entry.id}>
                <td data-label="When">{formatDateTime(entry.at)}</td>
                <td data-label="Who">{entry.operator.email}</td>
                <th scope="row" className="mono audit-action">{entry.action}<span className="key-meta">{entry.target} · {entry.status}</span></th>
                <td data-label="Changes" className="cell-full"><AuditChanges before={entry.before} after={entry.after} /></td>
                <td data-label="IP" className="mono">{entry.ip}</td>
              </tr>
            ))}</tbody></table></div>
        )}
      </Card>
    </div>
  );
}
