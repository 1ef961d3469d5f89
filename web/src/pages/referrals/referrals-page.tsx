import { useQuery } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import { ApiError, errorMessage } from '../../api/client';
import type { Referrals } from '../../api/money-types';
import { formatDate, formatDateTime, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { CopyButton } from '../../ui/copy-button';

const REASONS: Record<string, string> = {
  email_not_verified: 'Email not confirmed yet',
  repeated_ip: 'Signed up from an address already used for a referral',
};

function ReferralsView({ referrals }: { referrals: Referrals }) {
  const earned = referrals.rewards.reduce((sum, reward) => sum + reward.amount_usd, 0);
  return (
    <>
      <Card title="Your referral link">
        <p>{referrals.reward}</p>
        <div className="secret-row">
          <code className="secret" data-testid="referral-link">{referrals.link}</code>
          <CopyButton text={referrals.link} label="Copy link" />
        </div>
        <p className="key-meta">Code <strong data-testid="referral-code">{referrals.code}</strong> · earned so far {formatUsd(earned)}</p>
      </Card>
      <Card title="Sign-ups through your link">
        {referrals.referred.length === 0 ? <p className="empty">Nobody has signed up through your link yet.</p> : (
          <div className="table-scroll">
            <table className="table table-cards" data-testid="referred-accounts">
              <thead><tr><th scope="col">Signed up</th><th scope="col">Status</th><th scope="col" className="numeric">Top-ups rewarded</th><th scope="col" className="numeric">Earned</th></tr></thead>
              <tbody>
                {referrals.referred.map((referred) => (
                  <tr key={referred.account_id}>
                    <td data-label="Signed up">{formatDate(referred.signed_up_at)}</td>
                    <td data-label="Status">{referred.eligible ? <Badge tone="success">earning</Badge> : <Badge tone="neutral">{REASONS[referred.reason ?? ''] ?? 'Not earning'}</Badge>}</td>
                    <td data-label="Top-ups rewarded" className="numeric">{referred.rewards}</td>
                    <td data-label="Earned" className="numeric">{formatUsd(referred.rewarded_usd)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Card title="Rewards">
        {referrals.rewards.length === 0 ? <p className="empty">No rewards yet: they are credited when a referred account pays a card top-up.</p> : (
          <div className="table-scroll">
            <table className="table table-cards" data-testid="referral-rewards">
              <thead><tr><th scope="col">Credited</th><th scope="col" className="numeric">Amount</th></tr></thead>
              <tbody>
                {referrals.rewards.map((reward) => (
                  <tr key={reward.ledger_entry_id}><td data-label="Credited">{formatDateTime(reward.created_at)}</td><td data-label="Amount" className="numeric">{formatUsd(reward.amount_usd)}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}

export function ReferralsPage() {
  useDocumentTitle('Referrals');
  const api = useApi();
  const referrals = useQuery({ queryKey: ['referrals'], queryFn: () => api.get<Referrals>('/api/console/referrals') });
  return (
    <div className="page stack">
      <PageHeader title="Referrals" description="Share your link; when people you refer pay for credit, your account earns a reward." />
      {referrals.isPending ? <Loading /> : referrals.isError ? (
        <Alert tone={referrals.error instanceof ApiError && referrals.error.status === 403 ? 'info' : 'error'}>{errorMessage(referrals.error)}</Alert>
      ) : <ReferralsView referrals={referrals.data} />}
    </div>
  );
}
