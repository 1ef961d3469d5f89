import { useState } from 'react';
import { useApi, useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatDate } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Alert, PageHeader } from '../../ui/feedback';
import { PasswordCard } from './password-card';
import { SessionsCard } from './sessions-card';
import { TwoFactorCard } from './two-factor-card';

export function SecurityPage() {
  useDocumentTitle('Security');
  const api = useApi();
  const session = useSession();
  const [error, setError] = useState<string | null>(null);
  const user = session.data?.user;
  const signOutEverywhere = async () => {
    try {
      await api.post('/api/auth/sign-out-everywhere');
      window.location.replace('/sign-in');
    } catch (thrown) {
      setError(errorMessage(thrown));
    }
  };
  return (
    <div className="page stack">
      <PageHeader title="Security" description={user == null ? undefined : <>Signed in as <strong>{user.email}</strong> · member since {formatDate(user.created_at)}</>} />
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      <TwoFactorCard />
      <SessionsCard onSignOutEverywhere={() => void signOutEverywhere()} />
      <PasswordCard />
    </div>
  );
}
