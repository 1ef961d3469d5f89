import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Alert, Card, Loading, PageHeader } from '../../ui/feedback';
import { SsoConnectionForm } from '../single-sign-on/sso-connection-form';
import type { OperatorSsoJson } from '../../../../src/contract/index.js';
import { useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';

type OperatorSso = OperatorSsoJson;

/** Operators' single sign-on: set by OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, or here by an owner. */
export function OperatorSsoPage() {
  useDocumentTitle('Operator single sign-on');
  const me = useOperatorMe();
  const settings = useOperatorGet<OperatorSso>('sso');
  const action = useOperatorAction();
  const isOwner = me.data?.permissions.includes('operators:manage') === true;
  return (
    <div className="page stack">
      <PageHeader title="Single sign-on" description="Operators sign in through the deployment's identity provider; its groups or roles claim decides their operator role." />
      {settings.isPending ? <Loading /> : settings.error !== null ? <Alert tone="error">{errorMessage(settings.error)}</Alert> : settings.data.source === 'environment' && settings.data.connection !== null ? (
        <Card title="Set by the environment">
          <dl className="details" data-testid="operator-sso-environment">
            <dt>Issuer</dt><dd><code>{settings.data.connection.issuer}</code></dd>
            <dt>Client ID</dt><dd><code>{settings.data.connection.client_id}</code></dd>
            <dt>Role claim</dt><dd>{settings.data.connection.role_claim ?? '—'}</dd>
            <dt>Role map</dt><dd>{Object.entries(settings.data.connection.role_map).map(([value, role]) => `${value} → ${role}`).join(', ') || '—'}</dd>
            <dt>Redirect URI</dt><dd><code>{settings.data.redirect_uri}</code></dd>
          </dl>
          <p className="field-hint">OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET set these; change them there.</p>
        </Card>
      ) : (
        <Card title="Identity provider">
          {isOwner ? (
            <SsoConnectionForm kind="operator" current={settings.data.connection} redirectUri={settings.data.redirect_uri}
              onSave={async (body) => { await action.mutateAsync({ method: 'PUT', path: 'sso', body }); }}
              onRemove={async () => { await action.mutateAsync({ method: 'DELETE', path: 'sso' }); }} />
          ) : <Alert tone="info">{settings.data.connection === null ? 'Operators have no single sign-on.' : `Operators sign in through ${settings.data.connection.issuer}.`} Only owners change it.</Alert>}
        </Card>
      )}
    </div>
  );
}
