import type { ApiKey, DailyUsage } from '../../api/types';
import { formatCost, formatInteger } from '../../format/format';
import { addUsd } from '../../format/usd-sum';

/** The playground mints a key per call: their spend is one line. */
const PLAYGROUND = 'playground';

interface KeySpend {
  keyId: string | null;
  label: string | null;
  requests: number;
  tokens: number;
  cost: number;
  models: Set<string>;
}

/** The period's daily totals summed per key, dearest first. */
function spendPerKey(rows: DailyUsage[], listed: ReadonlySet<string>): KeySpend[] {
  const byKey = new Map<string | null, KeySpend>();
  for (const row of rows) {
    const playground = row.key_id !== null && !listed.has(row.key_id) && row.key_name === 'Playground';
    const group = playground ? PLAYGROUND : row.key_id;
    const spend = byKey.get(group) ?? { keyId: group, label: playground ? 'Playground' : row.key_name ?? null, requests: 0, tokens: 0, cost: 0, models: new Set<string>() };
    spend.requests += row.requests;
    spend.tokens += row.input_tokens + row.output_tokens;
    spend.cost = addUsd(spend.cost, row.cost_usd);
    if (row.model !== null) spend.models.add(row.model);
    byKey.set(group, spend);
  }
  return [...byKey.values()].sort((a, b) => b.cost - a.cost || b.requests - a.requests);
}

/**
 * What each key spent over the charts' period, from the same daily totals (shown only when there are some). Spend
 * comes right after the key, so a phone shows it without scrolling the table.
 */
export function SpendByKey({ rows, keys }: { rows: DailyUsage[]; keys: ApiKey[] }) {
  const keyNames = new Map(keys.map((key) => [key.id, `${key.name} (${key.hint})`]));
  const spends = spendPerKey(rows, new Set(keyNames.keys()));
  return (
    <div className="table-scroll">
      <table className="table table-cards" data-testid="spend-by-key">
        <caption className="visually-hidden">Spend per key over the period, dearest first</caption>
        <thead>
          <tr>
            <th scope="col">Key</th><th scope="col" className="numeric">Spend</th><th scope="col" className="numeric">Requests</th>
            <th scope="col" className="numeric">Tokens</th><th scope="col">Models</th>
          </tr>
        </thead>
        <tbody>
          {spends.map((spend) => (
            <tr key={spend.keyId ?? 'none'}>
              <th scope="row" title={spend.keyId === PLAYGROUND ? undefined : spend.keyId ?? undefined}>{spend.keyId === null ? 'No key' : keyNames.get(spend.keyId) ?? spend.label ?? spend.keyId}</th>
              <td data-label="Spend" className="numeric">{formatCost(spend.cost)}</td>
              <td data-label="Requests" className="numeric">{formatInteger(spend.requests)}</td>
              <td data-label="Tokens" className="numeric">{formatInteger(spend.tokens)}</td>
              <td data-label="Models" className="mono">{[...spend.models].sort().join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
