import { useSession } from '../../api/api-context';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Alert, PageHeader } from '../../ui/feedback';
import { WebhooksPanel } from './webhooks-panel';

/** The account's webhook endpoints, for its owners and admins. */
export function WebhooksPage() {
  useDocumentTitle('Webhooks');
  const session = useSession();
  const role = session.data?.role;
  return (
    <div className="page stack">
      <PageHeader title="Webhooks" description="Signed notifications of keys, alerts, top-ups, refunds, invoices and plans, sent to your endpoints." />
      {role === 'owner' || role === 'admin' ? <WebhooksPanel basePath="/api/console/webhooks" /> : <Alert tone="info">Only owners and admins of the account manage its webhooks.</Alert>}
    </div>
  );
}
