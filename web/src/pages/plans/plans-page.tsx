import { useQuery } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatDate, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';

interface SubscriptionView {
  id: string;
  plan_name: string | null;
  status: string;
  current_period: { start: string; end: string } | null;
  cancel_at: string | null;
  quota_usd: number | null;
  used_usd: number;
  remaining_usd: number;
  overage: { policy: 'deny' | 'limit' | 'payg'; limit_usd: number | null; used_usd: number } | null;
}

function overageText(overage: SubscriptionView['overage']): string {
  if (overage === null) return '—';
  switch (overage.policy) {
    case 'deny': return 'requests stop until the next period';
    case 'limit': return `up to ${formatUsd(overage.limit_usd)} a period from your balance (${formatUsd(overage.used_usd)} used)`;
    case 'payg': return 'requests are paid from the balance, without a limit';
  }
}

export function PlansPage() {
  useDocumentTitle('Plans');
  const api = useApi();
  const plans = useQuery({ queryKey: ['plans'], queryFn: () => api.get<{ data: SubscriptionView[] }>('/api/console/plans') });
  return (
    <div className="page stack">
      <PageHeader title="Plans" description="Quotas the operator granted this account; requests use them before the balance." />
      {plans.isPending ? <Loading /> : plans.isError ? <Alert tone="error">{errorMessage(plans.error)}</Alert> : plans.data.data.length === 0 ? (
        <Card><p className="empty">This account has no plan: requests are paid from the balance. Ask the operator (Support) about plans.</p></Card>
      ) : plans.data.data.map((subscription) => (
        <Card key={subscription.id} title={<>{subscription.plan_name ?? 'Plan'} <Badge tone={subscription.status === 'active' ? 'success' : 'neutral'}>{subscription.status}</Badge></>}>
          <dl className="stat-strip">
            <div className="stat"><dt>Remaining this period</dt><dd>{formatUsd(subscription.remaining_usd)}<span className="stat-note">of {formatUsd(subscription.quota_usd)}</span></dd></div>
            <div className="stat"><dt>Used</dt><dd>{formatUsd(subscription.used_usd)}</dd></div>
            <div className="stat"><dt>Period ends</dt><dd>{subscription.current_period === null ? '—' : formatDate(subscription.current_period.end)}<span className="stat-note">{subscription.current_period === null ? 'not running' : `from ${formatDate(subscription.current_period.start)}`}</span></dd></div>
          </dl>
          <p>Past the quota: {overageText(subscription.overage)}.{subscription.cancel_at === null ? '' : ` Ends ${formatDate(subscription.cancel_at)}.`}</p>
        </Card>
      ))}
    </div>
  );
}
