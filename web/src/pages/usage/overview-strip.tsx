import { errorMessage } from '../../api/client';
import { formatCost, formatDate, formatInteger, formatUsd } from '../../format/format';
import { Alert } from '../../ui/feedback';
import { useOverview } from './usage-queries';

/** Balance and what remains of each subscription, above everything else on the usage page. */
export function OverviewStrip() {
  const overview = useOverview();
  if (overview.isError) return <Alert tone="error">{errorMessage(overview.error)}</Alert>;
  const data = overview.data;
  return (
    <dl className="stat-strip" aria-busy={overview.isPending}>
      <div className="stat"><dt>Balance</dt><dd data-testid="balance">{formatUsd(data?.balance_usd)}</dd></div>
      {(data?.subscriptions ?? []).map((subscription) => (
        <div className="stat" key={`${subscription.plan}-${subscription.period_end}`}>
          <dt>{subscription.plan} remaining</dt>
          <dd>{formatUsd(subscription.remaining_usd)}<span className="stat-note">until {formatDate(subscription.period_end)}</span></dd>
        </div>
      ))}
      <div className="stat"><dt>Spent today</dt><dd data-testid="spend-today">{formatCost(data?.spend_today_usd)}</dd></div>
      <div className="stat"><dt>Requests today</dt><dd>{formatInteger(data?.requests_today)}</dd></div>
    </dl>
  );
}
