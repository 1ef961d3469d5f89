import type { ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { ApiError, errorMessage } from '../../api/client';
import { Alert, Loading, PageHeader } from '../../ui/feedback';
import { useOperatorMe } from './operator-queries';

/** Operator pages show only to operators with a second factor; the server refuses everyone else anyway. */
export function RequireOperator({ children }: { children: ReactNode }) {
  const me = useOperatorMe();
  if (me.isPending) return <Loading />;
  if (me.isError) {
    const notOperator = me.error instanceof ApiError && me.error.code === 'not_operator';
    return (
      <div className="page stack">
        <PageHeader title="Operator console" />
        <Alert tone="error">{notOperator ? 'This user is not an operator of the gateway.' : errorMessage(me.error)}</Alert>
      </div>
    );
  }
  if (me.data.two_factor_required) {
    return (
      <div className="page stack">
        <PageHeader title="Operator console" />
        <Alert tone="warning">Operators must use two-factor sign-in. <Link to="/security">Turn it on under Security</Link>, then come back.</Alert>
      </div>
    );
  }
  return <>{children}</>;
}
