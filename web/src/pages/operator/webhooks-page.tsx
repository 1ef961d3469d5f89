import { useDocumentTitle } from '../../layout/use-document-title';
import { PageHeader } from '../../ui/feedback';
import { WebhooksPanel } from '../webhooks/webhooks-panel';

/** The operator's webhook endpoints (channel down and back up), through the admin bridge. */
export function OperatorWebhooksPage() {
  useDocumentTitle('Operator webhooks');
  return (
    <div className="page stack">
      <PageHeader title="Webhooks" description="Signed notifications when a channel goes down and comes back." />
      <WebhooksPanel basePath="/api/operator/admin/webhooks" />
    </div>
  );
}
