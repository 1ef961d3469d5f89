import { useState } from 'react';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { errorMessage } from '../../api/client';
import type { ChannelHealthRow, OperatorOverview, TrafficSummary } from '../../api/operator-types';
import { formatCost, formatDateTime, formatInteger, formatMilliseconds, formatPercent } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { SelectField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { useOperatorGet } from './operator-queries';
import { BatchQueueCard } from './batch-queue-card';

type Summary = TrafficSummary;
type ChannelHealth = ChannelHealthRow;
type Overview = OperatorOverview;

const REFRESH_MS = 15_000;
const WINDOW_LABELS: Record<string, string> = { '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days' };
const axisProps = { stroke: 'var(--text-muted)', fontSize: 12, tickLine: false } as const;

function time(iso: string, window: string): string {
  const date = new Date(iso);
  return window === '7d' ? date.toLocaleDateString(undefined, { month: 'short', day: 'numeric', hour: '2-digit' }) : date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

function SeriesChart({ title, data, field, window, format, fraction = false }: { title: string; data: Overview['series']; field: keyof Summary; window: string; format: (value: number) => string; fraction?: boolean }) {
  return (
    <figure className="chart">
      <figcaption><h2>{title}</h2></figcaption>
      <div className="chart-area">
        <ResponsiveContainer width="100%" height={200}>
          <LineChart data={data} accessibilityLayer>
            <CartesianGrid stroke="var(--border)" vertical={false} />
            <XAxis dataKey="at" {...axisProps} tickFormatter={(value: string) => time(value, window)} minTickGap={24} />
            <YAxis {...axisProps} width={84} tickFormatter={(value: number) => format(value)} allowDecimals={field !== 'requests'} {...(fraction ? { domain: [0, 1] } : {})} />
            <Tooltip formatter={(value) => format(Number(value))} labelFormatter={(label) => formatDateTime(String(label))} contentStyle={{ background: 'var(--surface)', border: '1px solid var(--border)', borderRadius: 8, color: 'var(--text)' }} />
            <Line type="monotone" dataKey={field} stroke="var(--chart-1)" strokeWidth={2} dot={false} isAnimationActive={false} connectNulls />
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

const STATUS_TONE: Record<ChannelHealth['status'], 'success' | 'warning' | 'danger' | 'neutral'> = { operational: 'success', degraded: 'warning', down: 'danger', disabled: 'neutral' };

function ChannelHealthTable({ channels }: { channels: ChannelHealth[] }) {
  if (channels.length === 0) return <p className="empty">No channels yet.</p>;
  return (
    <div className="table-scroll">
      <table className="table table-cards" data-testid="channel-health">
        <caption className="visually-hidden">Channel health</caption>
        <thead><tr><th scope="col">Channel</th><th scope="col">Status</th><th scope="col">Breaker</th><th scope="col" className="numeric">Recent errors</th><th scope="col">Last error</th></tr></thead>
        <tbody>
          {channels.map((channel) => (
            <tr key={channel.channel_id}>
              <th scope="row">{channel.name}</th>
              <td data-label="Status"><Badge tone={STATUS_TONE[channel.status]}>{channel.status}</Badge></td>
              <td data-label="Breaker">{channel.breaker_state}</td>
              <td data-label="Recent errors" className="numeric">{channel.error_rate === null ? '—' : formatPercent(channel.error_rate)}<span className="key-meta">{formatInteger(channel.recent.successes)} ok, {formatInteger(channel.recent.failures)} failed</span></td>
              <td data-label="Last error">{channel.last_error === null ? '—' : <>{channel.last_error.class}<span className="key-meta">{formatDateTime(channel.last_error.at)}</span></>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function BreakdownTable({ caption, rows }: { caption: string; rows: (Summary & { name: string; channel_name?: string | null })[] }) {
  if (rows.length === 0) return <p className="empty">No calls in this window.</p>;
  return (
    <div className="table-scroll">
      <table className="table table-cards">
        <caption className="visually-hidden">{caption}</caption>
        <thead><tr><th scope="col">Name</th><th scope="col" className="numeric">Requests</th><th scope="col" className="numeric">Errors</th><th scope="col" className="numeric">p50</th><th scope="col" className="numeric">p99</th><th scope="col" className="numeric">Spend</th></tr></thead>
        <tbody>
          {rows.slice(0, 20).map((row) => (
            <tr key={row.name}>
              <th scope="row" className={row.channel_name == null ? 'mono' : undefined} title={row.channel_name == null ? undefined : row.name}>
                {row.channel_name ?? row.name}{row.channel_name == null ? null : <span className="key-meta mono">{row.name}</span>}
              </th>
              <td data-label="Requests" className="numeric">{formatInteger(row.requests)}</td>
              <td data-label="Errors" className="numeric">{formatPercent(row.error_rate)}</td>
              <td data-label="p50" className="numeric">{formatMilliseconds(row.latency_p50_ms)}</td>
              <td data-label="p99" className="numeric">{formatMilliseconds(row.latency_p99_ms)}</td>
              <td data-label="Spend" className="numeric">{formatCost(row.spend_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Traffic, errors, latency and spend of the whole deployment, refreshed every 15 seconds. */
export function OperatorOverviewPage() {
  useDocumentTitle('Operator overview');
  const [window, setWindow] = useState('24h');
  const overview = useOperatorGet<Overview>('overview', { window }, { refreshMs: REFRESH_MS });
  const data = overview.data;
  return (
    <div className="page stack">
      <PageHeader title="Overview" description="Live figures from this gateway process's metrics and channel health; the window's history from the usage log. Refreshes every 15 seconds."
        actions={<SelectField label="Window" value={window} onChange={(event) => setWindow(event.target.value)}
          options={Object.entries(WINDOW_LABELS).map(([value, label]) => ({ value, label }))} />} />
      {overview.isPending ? <Loading /> : null}
      {overview.isError ? <Alert tone="error">{errorMessage(overview.error)}</Alert> : null}
      {data === undefined ? null : (
        <>
          <Card title="Live now">
            <dl className="stat-strip" data-testid="operator-live">
              <div className="stat"><dt>Requests per second</dt><dd>{data.live.requests_per_second.toFixed(2)}<span className="stat-note">{formatInteger(data.live.requests)} in the last {formatInteger(data.live.window_seconds)} s · {formatInteger(data.live.in_flight)} in flight</span></dd></div>
              <div className="stat"><dt>Error rate</dt><dd>{formatPercent(data.live.error_rate)}<span className="stat-note">{formatInteger(data.live.errors)} failed</span></dd></div>
              <div className="stat"><dt>Latency p50 / p99</dt><dd>{formatMilliseconds(data.live.latency_p50_ms)}<span className="stat-note">p99 {formatMilliseconds(data.live.latency_p99_ms)}</span></dd></div>
            </dl>
            <ChannelHealthTable channels={data.channels} />
          </Card>
          <BatchQueueCard />
          <h2>{WINDOW_LABELS[data.window] ?? data.window}, from the usage log</h2>
          <dl className="stat-strip" data-testid="operator-stats">
            <div className="stat"><dt>Requests</dt><dd>{formatInteger(data.totals.requests)}<span className="stat-note">{data.totals.requests_per_second.toFixed(3)} per second</span></dd></div>
            <div className="stat"><dt>Error rate</dt><dd>{formatPercent(data.totals.error_rate)}<span className="stat-note">{formatInteger(data.totals.errors)} failed</span></dd></div>
            <div className="stat"><dt>Latency p50 / p99</dt><dd>{formatMilliseconds(data.totals.latency_p50_ms)}<span className="stat-note">p99 {formatMilliseconds(data.totals.latency_p99_ms)}</span></dd></div>
            <div className="stat"><dt>Spend</dt><dd>{formatCost(data.totals.spend_usd)}</dd></div>
            <div className="stat"><dt>Active accounts</dt><dd>{formatInteger(data.active_accounts)}</dd></div>
            <div className="stat"><dt>Balances owed</dt><dd>{formatCost(data.balances_owed.usd)}<span className="stat-note">{formatInteger(data.balances_owed.accounts)} accounts below zero</span></dd></div>
          </dl>
          <div className="chart-grid">
            <SeriesChart title="Requests" data={data.series} field="requests" window={data.window} format={formatInteger} />
            <SeriesChart title="Error rate" data={data.series} field="error_rate" window={data.window} format={formatPercent} fraction />
            <SeriesChart title="Latency p99" data={data.series} field="latency_p99_ms" window={data.window} format={formatMilliseconds} />
            <SeriesChart title="Spend" data={data.series} field="spend_usd" window={data.window} format={formatCost} />
          </div>
          <Card title="By model"><BreakdownTable caption="Calls by model" rows={data.by_model} /></Card>
          <Card title="By channel"><BreakdownTable caption="Calls by channel" rows={data.by_channel} /></Card>
        </>
      )}
    </div>
  );
}
