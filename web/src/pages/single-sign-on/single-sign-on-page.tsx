import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useApi, useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { CopyButton } from '../../ui/copy-button';
import { Alert, Card, Loading, PageHeader } from '../../ui/feedback';
import type { AccountSsoJson } from '../../../../src/contract/index.js';
import { SsoConnectionForm } from './sso-connection-form';

type SsoSettings = AccountSsoJson;

const KEY = ['sso-settings'];

/** The SCIM token: made (or replaced) here and shown once. */
function ScimCard({ settings, canManage }: { settings: SsoSettings; canManage: boolean }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const [token, setToken] = useState<string | null>(null);
  const issue = useMutation({
    mutationFn: () => api.post<{ token: string }>('/api/sso/scim-token'),
    onSuccess: (answer) => setToken(answer.token),
    onSettled: () => queryClient.invalidateQueries({ queryKey: KEY }),
  });
  const enabled = settings.connection?.scim_enabled === true;
  return (
    <Card title="SCIM provisioning">
      <div className="stack">
        <p>Your directory (Okta, Entra ID, …) creates and deactivates members and maps its groups to roles through the role map above.</p>
        <div className="inline-actions"><span>Base URL</span><code data-testid="scim-base-url">{settings.scim_base_url}</code><CopyButton text={settings.scim_base_url} /></div>
        <p>{enabled ? 'A token is set. Making a new one replaces it at once.' : 'No token yet.'}</p>
        {token === null ? null : (
          <Alert tone="warning">
            <span>Copy the token now; it is not shown again.</span>
            <span className="inline-actions"><code data-testid="scim-token">{token}</code><CopyButton text={token} /></span>
          </Alert>
        )}
        {issue.error === null ? null : <Alert tone="error">{errorMessage(issue.error)}</Alert>}
        {canManage ? <div className="form-actions"><Button onClick={() => issue.mutate()} busy={issue.isPending} disabled={settings.connection === null}>{enabled ? 'Replace the SCIM token' : 'Create a SCIM token'}</Button></div> : null}
      </div>
    </Card>
  );
}

/** The account's single sign-on (OpenID Connect) and SCIM provisioning, for its owners and admins. */
export function SingleSignOnPage() {
  useDocumentTitle('Single sign-on');
  const api = useApi();
  const session = useSession();
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: KEY, queryFn: () => api.get<SsoSettings>('/api/sso') });
  const role = session.data?.role;
  const canManage = role === 'owner' || role === 'admin';
  const save = async (body: Record<string, unknown>) => {
    await api.put('/api/sso', body);
    await queryClient.invalidateQueries({ queryKey: KEY });
  };
  const remove = async () => {
    await api.delete('/api/sso');
    await queryClient.invalidateQueries({ queryKey: KEY });
  };
  return (
    <div className="page stack">
      <PageHeader title="Single sign-on" description="Members sign in through your identity provider (OpenID Connect: Google, Microsoft Entra ID, Okta, Keycloak, Authentik, …)." />
      {settings.isPending ? <Loading /> : settings.error !== null ? <Alert tone="error">{errorMessage(settings.error)}</Alert> : (
        <>
          <Card title="Identity provider">
            {canManage
              ? <SsoConnectionForm kind="account" current={settings.data.connection} redirectUri={settings.data.redirect_uri} onSave={save} onRemove={remove} />
              : <Alert tone="info">{settings.data.connection === null ? 'This account has no single sign-on.' : `Members sign in through ${settings.data.connection.issuer}.`} Only owners and admins change it.</Alert>}
          </Card>
          <ScimCard settings={settings.data} canManage={canManage} />
        </>
      )}
    </div>
  );
}
