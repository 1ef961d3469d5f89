import type { ApiKey, BudgetPeriod, KeyStatus } from '../../api/types';
import { Badge } from '../../ui/feedback';

const tones = { enabled: 'success', disabled: 'neutral', revoked: 'danger', expired: 'warning', paused: 'warning' } as const;
const labels: Record<Exclude<KeyStatus, 'paused'>, string> = { enabled: 'Enabled', disabled: 'Disabled', revoked: 'Revoked', expired: 'Expired' };
export const periodAdjectives: Record<BudgetPeriod, string> = { day: 'Daily', week: 'Weekly', month: 'Monthly' };

/**
 * Why a paused key is paused, read from its spend: its quota cap is spent for good, or its budget until the reset
 * (the budget beside it says when). A key paused only by amounts held for requests in flight reads "Paused" alone.
 */
function pausedReason(key: ApiKey): string | null {
  if (key.quota_usd != null && key.spent_usd >= key.quota_usd) return 'Quota cap spent';
  if (key.budget != null && budgetSpent(key)) return `${periodAdjectives[key.budget.period]} budget spent`;
  return null;
}

/** Whether the key's budget is spent for this period, so it stays paused until `resets_at`. */
export function budgetSpent(key: ApiKey): boolean {
  return key.budget != null && key.budget.spent_usd >= key.budget.limit_usd;
}

export function KeyStatusBadge({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.status !== 'paused') return <Badge tone={tones[apiKey.status]}>{labels[apiKey.status]}</Badge>;
  const reason = pausedReason(apiKey);
  return (
    <>
      <Badge tone={tones.paused}>Paused</Badge>
      {reason === null ? null : <span className="key-meta key-paused">{reason}</span>}
    </>
  );
}
