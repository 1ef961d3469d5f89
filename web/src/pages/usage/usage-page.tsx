import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router-dom';
import { errorMessage } from '../../api/client';
import { utcDay } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Card, Loading, PageHeader } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';
import { useKeys, useModels } from '../keys/key-queries';
import { OverviewStrip } from './overview-strip';
import { UsageCharts } from './usage-charts';
import { UsageTable } from './usage-table';
import { SpendByKey } from './spend-by-key';
import { SpendByCustomer } from './spend-by-customer';
import { filterQuery, useDailyUsage, useUsageRows, type UsageFilters } from './usage-queries';

const statusOptions = [
  { value: '', label: 'Any status' },
  ...[200, 400, 401, 402, 403, 404, 413, 429, 499, 500, 502, 503, 504].map((code) => ({ value: String(code), label: String(code) })),
];

function defaultRange(): { from: string; to: string } {
  const today = new Date();
  return { from: utcDay(new Date(today.getTime() - 29 * 86_400_000)), to: utcDay(today) };
}

/** The filters live in the address, so a filtered view can be bookmarked and shared. */
function filtersFrom(searchParams: URLSearchParams): UsageFilters {
  const range = defaultRange();
  const read = (name: string) => searchParams.get(name) ?? undefined;
  return { key_id: read('key_id'), model: read('model'), status: read('status'), from: read('from') ?? range.from, to: read('to') ?? range.to };
}

export function UsagePage() {
  useDocumentTitle('Usage');
  const [searchParams, setSearchParams] = useSearchParams();
  const filters = filtersFrom(searchParams);
  const [draft, setDraft] = useState<UsageFilters>(filters);
  const keys = useKeys();
  const models = useModels();
  const rows = useUsageRows(filters);
  const daily = useDailyUsage(filters);
  const set = (field: keyof UsageFilters, value: string) => setDraft((current) => ({ ...current, [field]: value === '' ? undefined : value }));

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [name, value] of Object.entries(draft)) if (typeof value === 'string' && value !== '') next.set(name, value);
    setSearchParams(next);
  };
  const csv = new URLSearchParams();
  for (const [name, value] of Object.entries(filterQuery(filters))) if (value !== undefined) csv.set(name, value);
  const allRows = rows.data?.pages.flatMap((page) => page.data) ?? [];

  return (
    <div className="page stack">
      <PageHeader title="Usage" description="Every request made with this account's keys: metadata only, never prompts or answers." />
      <OverviewStrip />
      <Card>
        <form className="filters" onSubmit={apply} aria-label="Filter usage">
          <SelectField label="Key" value={draft.key_id ?? ''} onChange={(event) => set('key_id', event.target.value)}
            options={[{ value: '', label: 'All keys' }, ...(keys.data?.data ?? []).map((key) => ({ value: key.id, label: `${key.name} (${key.hint})` }))]} />
          <SelectField label="Model" value={draft.model ?? ''} onChange={(event) => set('model', event.target.value)}
            options={[{ value: '', label: 'All models' }, ...(models.data?.data ?? []).map((model) => ({ value: model.id, label: model.id }))]} />
          <SelectField label="Status" value={draft.status ?? ''} onChange={(event) => set('status', event.target.value)} options={statusOptions} />
          <TextField label="From" type="date" value={draft.from ?? ''} onChange={(event) => set('from', event.target.value)} />
          <TextField label="To" type="date" value={draft.to ?? ''} onChange={(event) => set('to', event.target.value)} />
          <div className="filter-actions">
            <Button type="submit" variant="primary">Apply</Button>
            <a className="button button-secondary" href={`/api/usage.csv?${csv.toString()}`} download>Export CSV</a>
          </div>
        </form>
      </Card>
      <Card>
        {daily.isPending ? <Loading label="Loading charts…" /> : null}
        {daily.isError ? <Alert tone="error">{errorMessage(daily.error)}</Alert> : null}
        {daily.data === undefined ? null : <UsageCharts rows={daily.data.data} />}
      </Card>
      {daily.data === undefined || daily.data.data.length === 0 ? null : (
        <Card title="Spend by key">
          <SpendByKey rows={daily.data.data} keys={keys.data?.data ?? []} />
        </Card>
      )}
      <Card title="Spend by customer and tag">
        <SpendByCustomer filters={filters} />
      </Card>
      <Card title="Requests">
        {rows.isPending ? <Loading /> : null}
        {rows.isError ? <Alert tone="error">{errorMessage(rows.error)}</Alert> : null}
        {rows.data !== undefined && allRows.length === 0 ? <p className="empty">No requests match these filters.</p> : null}
        {allRows.length === 0 ? null : <UsageTable rows={allRows} keys={keys.data?.data ?? []} />}
        {rows.hasNextPage ? (
          <div className="load-more"><Button onClick={() => void rows.fetchNextPage()} busy={rows.isFetchingNextPage}>Load more</Button></div>
        ) : null}
      </Card>
    </div>
  );
}
