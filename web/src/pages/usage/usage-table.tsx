import type { ApiKey, UsageRow } from '../../api/types';
import { formatCost, formatDateTime, formatHostedTools, formatInteger, formatMilliseconds } from '../../format/format';
import { Badge } from '../../ui/feedback';

function StatusBadge({ row }: { row: UsageRow }) {
  const ok = row.status >= 200 && row.status < 300;
  return (
    <>
      <Badge tone={ok ? 'success' : row.status === 499 ? 'neutral' : 'danger'}>{row.status}{row.error_code == null ? '' : ` ${row.error_code}`}</Badge>
      {row.cache_hit ? <span className="key-meta">from cache</span> : null}
    </>
  );
}

/** The web searches (and other hosted tool calls) a request paid for, under its cost. */
export function HostedTools({ row }: { row: Parameters<typeof formatHostedTools>[0] }) {
  const text = formatHostedTools(row);
  return text === null ? null : <span className="key-meta" data-testid="hosted-tools">{text}</span>;
}

export function UsageTable({ rows, keys }: { rows: UsageRow[]; keys: ApiKey[] }) {
  const keyNames = new Map(keys.map((key) => [key.id, key.name]));
  return (
    <div className="table-scroll">
      <table className="table table-cards usage-table" data-testid="usage-table">
        <caption className="visually-hidden">Requests, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th><th scope="col">Key</th><th scope="col">Model</th><th scope="col">Status</th>
            <th scope="col" className="numeric">Tokens in / out</th>
            <th scope="col" className="numeric">Cost</th><th scope="col" className="numeric">Latency</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.request_id}>
              <td data-label="Time" className="cell-nowrap"><time dateTime={row.created_at} title={row.request_id}>{formatDateTime(row.created_at)}</time></td>
              <td data-label="Key"><span title={row.key_id ?? undefined}>{row.key_id == null ? '—' : row.key_name ?? keyNames.get(row.key_id) ?? row.key_id}</span></td>
              <td data-label="Model" className="usage-model-cell"><span className="mono usage-model">{row.model ?? '—'}</span><span className="key-meta usage-endpoint">{row.endpoint}{row.stream ? ' · stream' : ''}</span></td>
              <td data-label="Status"><StatusBadge row={row} /></td>
              <td data-label="Tokens in / out" className="numeric">{formatInteger(row.prompt_tokens)} / {formatInteger(row.completion_tokens)}</td>
              <td data-label="Cost" className="numeric">{formatCost(row.cost_usd)}<HostedTools row={row} /></td>
              <td data-label="Latency" className="numeric">{formatMilliseconds(row.latency_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
