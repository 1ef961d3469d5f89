import { Link } from 'react-router-dom';
import { useSession } from '../../api/api-context';
import { formatDate, formatUsd } from '../../format/format';
import { Alert } from '../../ui/feedback';

/** Why a sign-up got no credit, in the owner's words. */
const NOT_GIVEN: Record<string, string> = {
  email_used: 'this email address already had one',
  address_used: 'an account from your network already had one',
  account_not_enabled: 'the account is disabled',
  off: 'the gateway gives none now',
};

/**
 * The account's balance where keys are made, and what to do when it is used up: calls answer 402 at $0, so the
 * user learns it here, with the ways to add funds (card or code on Billing, or the operator through Support).
 */
export function FundsNotice() {
  const session = useSession();
  const account = session.data?.account ?? null;
  const user = session.data?.user ?? null;
  if (account === null || user === null) return null;
  const credit = account.sign_up_credit ?? null;
  const empty = account.balance_usd <= 0;
  return (
    <div className="stack" data-testid="funds-notice">
      {credit?.state === 'offered' && !user.email_verified ? (
        <Alert tone="info">Verify your email address to get {formatUsd(credit.amount_usd)} of free credit{credit.days == null ? '' : `, valid ${credit.days} days`}: enough for a first call without a card.</Alert>
      ) : null}
      {credit?.state === 'granted' && !empty ? (
        <Alert tone="success">Your balance is {formatUsd(account.balance_usd)}, including a {formatUsd(credit.amount_usd)} sign-up credit{credit.expires_at == null ? '' : ` (what is left of it expires ${formatDate(credit.expires_at)})`}.</Alert>
      ) : null}
      {empty ? (
        <Alert tone="warning">
          Your balance is {formatUsd(account.balance_usd)}: calls with your keys answer 402 (payment required) until you add funds.{' '}
          {credit?.state === 'not_given' ? `No sign-up credit: ${NOT_GIVEN[credit.reason ?? ''] ?? 'it is given once per person'}. ` : ''}
          <Link to="/billing">Top up or redeem a code</Link> on the Billing page, or <Link to="/support">ask the operator</Link> for credit.
        </Alert>
      ) : null}
    </div>
  );
}
