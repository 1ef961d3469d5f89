import type { ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { errorMessage } from '../../api/client';
import { Alert, Loading, PageHeader } from '../../ui/feedback';
import { useOperatorMe } from './operator-queries';

/** Operator pages show only to operators with a second factor; the server refuses everyone else anyway. */
export function RequireOperator({ children }: { children: ReactNode }) {
  const me = useOperatorMe();
  if (me.isPending) return <Loading />;
  const refusal = me.isError
    ? errorMessage(me.error)
    : me.data == null
      ? 'This user is not an operator of the gateway.'
      : me.data.disabled ? 'An owner disabled your operator access; ask an owner of the gateway to enable it.' : null;
  if (refusal !== null) {
    return (
      <div className="page stack">
        <PageHeader title="Operator console" />
        <Alert tone="error">{refusal}</Alert>
      </div>
    );
  }
  if (me.data?.two_factor_required === true) {
    return (
      <div className="page stack">
        <PageHeader title="Operator console" />
        <Alert tone="warning">Operators must use two-factor sign-in. <Link to="/security">Turn it on under Security</Link>, then come back.</Alert>
      </div>
    );
  }
  return <>{children}</>;
}
