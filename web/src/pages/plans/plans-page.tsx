import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import type { ConsolePlansJson, OfferedPlanJson, PlanChoiceJson, SubscriptionJson } from '../../../../src/contract/index.js';
import { sessionQueryKey, useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { Billing } from '../../api/money-types';
import { formatDate, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';

type SubscriptionView = SubscriptionJson;
type OfferedPlan = OfferedPlanJson;
type PlansAnswer = ConsolePlansJson;
type PlanChoice = PlanChoiceJson;

function overageText(overage: SubscriptionView['overage']): string {
  if (overage === null) return '—';
  switch (overage.policy) {
    case 'deny': return 'requests stop until the next period';
    case 'limit': return `up to ${formatUsd(overage.limit_usd)} a period from your balance (${formatUsd(overage.used_usd)} used)`;
    case 'payg': return 'requests are paid from the balance, without a limit';
  }
}

function offeredOverageText(plan: OfferedPlan): string {
  switch (plan.overage.policy) {
    case 'deny': return 'Requests stop at the quota until the next period.';
    case 'limit': return `Past the quota, up to ${formatUsd(plan.overage.limit_usd)} a period from the balance.`;
    case 'payg': return 'Past the quota, requests are paid from the balance.';
  }
}

function priceText(plan: Pick<OfferedPlan, 'price_usd' | 'period'>): string {
  return plan.price_usd === 0 ? 'Free' : `${formatUsd(plan.price_usd)} a ${plan.period}`;
}

/** What choosing `plan` costs now, by the same rule the server applies. */
function chargeNow(plan: OfferedPlan, current: OfferedPlan | undefined): { amount: number; explanation: string } {
  if (current === undefined) {
    return { amount: plan.price_usd, explanation: `A new ${plan.period} starts now.` };
  }
  if (current.period !== plan.period) {
    return { amount: plan.price_usd, explanation: `A new ${plan.period} starts now with nothing used; the rest of your current period is not refunded.` };
  }
  const difference = Math.max(0, Math.round((plan.price_usd - current.price_usd) * 100) / 100);
  return {
    amount: difference,
    explanation: difference > 0
      ? `Your current ${plan.period} continues with the new quota; you pay the difference to ${current.name} now.`
      : `Your current ${plan.period} continues with the new quota; nothing is refunded.`,
  };
}

function SubscriptionCard({ subscription }: { subscription: SubscriptionView }) {
  const active = subscription.status === 'active';
  let ending = '';
  if (active && subscription.renews && subscription.paid_through !== null) {
    ending = ` Renews ${formatDate(subscription.paid_through)} for ${formatUsd(subscription.price_usd)} from the balance.`;
  } else if (subscription.cancel_at !== null) {
    ending = ` ${active ? 'Ends' : 'Ended'} ${formatDate(subscription.cancel_at)}.`;
  }
  return (
    <Card title={<>{subscription.plan_name ?? 'Plan'} <Badge tone={active ? 'success' : 'neutral'}>{subscription.status}</Badge></>}>
      <dl className="stat-strip">
        <div className="stat"><dt>Remaining this period</dt><dd>{formatUsd(subscription.remaining_usd)}<span className="stat-note">of {formatUsd(subscription.quota_usd)}</span></dd></div>
        <div className="stat"><dt>Used</dt><dd>{formatUsd(subscription.used_usd)}</dd></div>
        <div className="stat"><dt>Period ends</dt><dd>{subscription.current_period === null ? '—' : formatDate(subscription.current_period.end)}<span className="stat-note">{subscription.current_period === null ? 'not running' : `from ${formatDate(subscription.current_period.start)}`}</span></dd></div>
      </dl>
      <p>Past the quota: {overageText(subscription.overage)}.{ending}</p>
    </Card>
  );
}

function ChoosePlanCard({ offered, canChoose }: { offered: OfferedPlan[]; canChoose: boolean }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const [choosing, setChoosing] = useState<OfferedPlan | null>(null);
  const billing = useQuery({ queryKey: ['billing'], queryFn: () => api.get<Billing>('/api/console/billing'), enabled: canChoose });
  const choose = useMutation({
    mutationFn: (plan: OfferedPlan) => api.post<PlanChoice>(`/api/console/plans/${encodeURIComponent(plan.id)}/choose`, {}),
    onSuccess: () => {
      setChoosing(null);
      return Promise.all(['plans', 'billing', 'invoices'].map((key) => queryClient.invalidateQueries({ queryKey: [key] })).concat(queryClient.invalidateQueries({ queryKey: sessionQueryKey })));
    },
  });
  const current = offered.find((plan) => plan.current);
  const charge = choosing === null ? null : chargeNow(choosing, current);
  const balance = billing.data?.balance_usd;
  const short = charge !== null && balance !== undefined && charge.amount > balance;
  const close = () => {
    setChoosing(null);
    choose.reset();
  };
  return (
    <Card title={current === undefined ? 'Choose a plan' : 'Change your plan'}>
      <p className="field-hint">
        Plans are paid from the prepaid balance at the start of each period and renew while the balance covers them; each payment has an invoice on the <Link to="/billing">Billing</Link> page.
        {canChoose ? '' : ' Only the account\'s owners, admins and billing members can choose a plan.'}
      </p>
      {choose.isSuccess ? (
        <Alert tone="success">
          You are on {choose.data.subscription.plan_name}. {choose.data.charged_usd > 0 ? `${formatUsd(choose.data.charged_usd)} was taken from the balance; the invoice is on the Billing page.` : 'Nothing was charged.'}
        </Alert>
      ) : null}
      <ul className="plan-options" aria-label="Plans you can choose">
        {offered.map((plan) => (
          <li key={plan.id} className={`plan-option${plan.current ? ' plan-option-current' : ''}`}>
            <h3 className="plan-option-name">{plan.name} {plan.current ? <Badge tone="success">your plan</Badge> : null}</h3>
            <p className="plan-option-price">{priceText(plan)}</p>
            <p>{formatUsd(plan.quota_usd)} of requests a {plan.period}.</p>
            <p className="field-hint">{offeredOverageText(plan)}</p>
            {canChoose && !plan.current ? (
              <Button variant="primary" onClick={() => setChoosing(plan)}>
                {current === undefined ? 'Choose' : 'Change to'} {plan.name}
              </Button>
            ) : null}
          </li>
        ))}
      </ul>
      <Dialog open={choosing !== null} title={current === undefined ? 'Choose this plan?' : 'Change your plan?'} onClose={close}>
        {choosing === null || charge === null ? null : (
          <div className="stack">
            <p><strong>{choosing.name}</strong>: {priceText(choosing)}, {formatUsd(choosing.quota_usd)} of requests a {choosing.period}.</p>
            <p>{charge.explanation}</p>
            <dl className="stat-strip">
              <div className="stat"><dt>Paid now from the balance</dt><dd>{formatUsd(charge.amount)}</dd></div>
              <div className="stat"><dt>Balance now</dt><dd>{balance === undefined ? '—' : formatUsd(balance)}</dd></div>
            </dl>
            {short ? <Alert tone="warning">The balance does not cover this. <Link to="/billing">Top up</Link> first.</Alert> : null}
            {choose.isError ? <Alert tone="error">{errorMessage(choose.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={close}>Cancel</Button>
              <Button variant="primary" busy={choose.isPending} disabled={short} onClick={() => choose.mutate(choosing)}>
                {charge.amount > 0 ? `Pay ${formatUsd(charge.amount)} and switch` : 'Switch'}
              </Button>
            </div>
          </div>
        )}
      </Dialog>
    </Card>
  );
}

export function PlansPage() {
  useDocumentTitle('Plans');
  const api = useApi();
  const plans = useQuery({ queryKey: ['plans'], queryFn: () => api.get<PlansAnswer>('/api/console/plans') });
  return (
    <div className="page stack">
      <PageHeader title="Plans" description="A plan's quota pays for requests before the balance does." />
      {plans.isPending ? <Loading /> : plans.isError ? <Alert tone="error">{errorMessage(plans.error)}</Alert> : (
        <>
          {plans.data.data.length === 0 ? (
            <Card><p className="empty">This account has no plan: requests are paid from the balance.{plans.data.offered.length === 0 ? ' Ask the operator (Support) about plans.' : ''}</p></Card>
          ) : plans.data.data.map((subscription) => <SubscriptionCard key={subscription.id} subscription={subscription} />)}
          {plans.data.offered.length === 0 ? null : <ChoosePlanCard offered={plans.data.offered} canChoose={plans.data.can_choose} />}
        </>
      )}
    </div>
  );
}
