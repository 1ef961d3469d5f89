import { useState } from 'react';
import { useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { ApiKey, KeyBudget, KeyInput } from '../../api/types';
import { formatCost, formatDate, formatDateTime, formatInteger, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { Dialog } from '../../ui/dialog';
import { FundsNotice } from './funds-notice';
import { KeyForm } from './key-form';
import { budgetSpent, KeyStatusBadge, periodAdjectives } from './key-status';
import { SecretDialog } from './secret-dialog';
import { useCreateKey, useKeys, useModels, useOfferedGuardrails, useOfferedMcpServers, useRevokeKey, useUpdateKey } from './key-queries';
import { useProjects } from '../projects/project-queries';

/** A new key: unset attributes are left out (the server's defaults: no limit). */
function creationBody(input: KeyInput): Partial<KeyInput> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null)) as Partial<KeyInput>;
}

function limitsOf(key: ApiKey): string {
  const parts = [
    key.rpm == null ? null : `${formatInteger(key.rpm)} RPM`,
    key.tpm == null ? null : `${formatInteger(key.tpm)} TPM`,
    key.concurrency == null ? null : `${formatInteger(key.concurrency)} at once`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'Account limits' : parts.join(' · ');
}

function Spend({ apiKey }: { apiKey: ApiKey }) {
  return (
    <div className="spend">
      <span>{formatCost(apiKey.spent_usd)}{apiKey.quota_usd == null ? '' : ` of ${formatUsd(apiKey.quota_usd)}`}</span>
      {apiKey.quota_usd == null || apiKey.quota_usd === 0 ? null : (
        <meter min={0} max={apiKey.quota_usd} value={Math.min(apiKey.spent_usd, apiKey.quota_usd)} aria-label={`Spent of the ${apiKey.name} cap`} />
      )}
      {apiKey.budget == null ? null : <BudgetSpend apiKey={apiKey} budget={apiKey.budget} />}
    </div>
  );
}

function BudgetSpend({ apiKey, budget }: { apiKey: ApiKey; budget: KeyBudget }) {
  return (
    <div className="budget" data-testid="key-budget">
      <span className="budget-label">{periodAdjectives[budget.period]} budget</span>
      <span>{formatCost(budget.spent_usd)} of {formatUsd(budget.limit_usd)}</span>
      {budget.limit_usd === 0 ? null : (
        <meter min={0} max={budget.limit_usd} high={budget.limit_usd * 0.8} value={Math.min(budget.spent_usd, budget.limit_usd)} aria-label={`Spent of the ${apiKey.name} ${budget.period} budget`} />
      )}
      {budgetSpent(apiKey)
        ? <span className="key-meta key-paused">Paused until {formatDateTime(budget.resets_at)}</span>
        : <span className="key-meta">Resets {formatDateTime(budget.resets_at)}</span>}
    </div>
  );
}

function AccessOf({ apiKey }: { apiKey: ApiKey }) {
  return (
    <>
      {apiKey.allowed_models == null ? 'All' : apiKey.allowed_models.join(', ')}
      {apiKey.ip_allowlist == null ? null : <span className="key-meta">IPs: {apiKey.ip_allowlist.join(', ')}</span>}
      {apiKey.guardrails === undefined || apiKey.guardrails.length === 0 ? null : <span className="key-meta">Guardrails: {apiKey.guardrails.join(', ')}</span>}
      {apiKey.allowed_origins == null ? null : (
        <span className="key-origins" title={apiKey.allowed_origins_warning}>
          <Badge tone="warning">Browser access</Badge>
          <span className="key-meta mono">{apiKey.allowed_origins.join(', ')}</span>
        </span>
      )}
    </>
  );
}

export function KeysPage() {
  useDocumentTitle('API keys');
  const session = useSession();
  const keys = useKeys();
  const models = useModels();
  const guardrails = useOfferedGuardrails();
  const mcpServers = useOfferedMcpServers();
  const projects = useProjects();
  // The project of each key is shown once the account has projects besides the default one.
  const projectNames = new Map((projects.data?.data ?? []).filter((project) => !project.default).map((project) => [project.id, project.name]));
  const createKey = useCreateKey();
  const updateKey = useUpdateKey();
  const revokeKey = useRevokeKey();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<ApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const verified = session.data?.user?.email_verified === true;
  const actionError = updateKey.isError && editing === null ? errorMessage(updateKey.error) : revokeKey.isError ? errorMessage(revokeKey.error) : null;

  return (
    <div className="page stack">
      <PageHeader
        title="API keys"
        description="Each key reaches every model family through one base URL. Secrets are shown once, when the key is made."
        actions={<Button variant="primary" onClick={() => { createKey.reset(); setCreating(true); }} disabled={!verified} title={verified ? undefined : 'Verify your email first'}>Create key</Button>}
      />
      <FundsNotice />
      {actionError === null ? null : <Alert tone="error">{actionError}</Alert>}
      <Card>
        {keys.isPending ? <Loading /> : null}
        {keys.isError ? <Alert tone="error">{errorMessage(keys.error)}</Alert> : null}
        {keys.data?.data.length === 0 ? <p className="empty">No keys yet. Create one to call the API.</p> : null}
        {keys.data === undefined || keys.data.data.length === 0 ? null : (
          <div className="table-scroll">
            <table className="table keys-table">
              <caption className="visually-hidden">API keys of this account</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th><th scope="col">State</th><th scope="col">Spend</th><th scope="col">Models</th>
                  <th scope="col">Limits</th><th scope="col">Expires</th><th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {keys.data.data.map((key) => (
                  <tr key={key.id} data-key-id={key.id}>
                    <th scope="row">
                      <span className="key-name">{key.name}</span>
                      <span className="key-meta mono">{key.hint}{key.environment == null ? null : <> · {key.environment}</>}</span>
                      {projectNames.size === 0 ? null : <span className="key-meta">Project: {key.project_id === null ? 'Default' : projectNames.get(key.project_id) ?? key.project_id}</span>}
                      <span className="key-meta">Created {formatDate(key.created_at)}</span>
                    </th>
                    <td data-label="State"><KeyStatusBadge apiKey={key} /></td>
                    <td data-label="Spend"><Spend apiKey={key} /></td>
                    <td data-label="Models"><AccessOf apiKey={key} /></td>
                    <td data-label="Limits">{limitsOf(key)}</td>
                    <td data-label="Expires">{key.expires_at == null ? 'Never' : formatDateTime(key.expires_at)}</td>
                    <td className="cell-actions">
                      {key.status === 'revoked' ? null : (
                        <>
                          <Button variant="ghost" onClick={() => { updateKey.reset(); setEditing(key); }} aria-label={`Edit ${key.name}`}>Edit</Button>
                          {key.status === 'disabled' ? (
                            <Button variant="ghost" onClick={() => updateKey.mutate({ id: key.id, changes: { status: 'enabled' } })} aria-label={`Enable ${key.name}`}>Enable</Button>
                          ) : (
                            <Button variant="ghost" onClick={() => updateKey.mutate({ id: key.id, changes: { status: 'disabled' } })} aria-label={`Disable ${key.name}`}>Disable</Button>
                          )}
                          <Button variant="danger" onClick={() => { revokeKey.reset(); setRevoking(key); }} aria-label={`Revoke ${key.name}`}>Revoke</Button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>

      <Dialog open={creating} title="Create an API key" onClose={() => setCreating(false)}>
        {creating ? (
          <KeyForm initial={null} models={models.data?.data ?? []} projects={projects.data?.data ?? []} guardrails={guardrails.data?.data ?? []} mcpServers={mcpServers.data?.data ?? []} submitLabel="Create key" busy={createKey.isPending}
            serverError={createKey.isError ? errorMessage(createKey.error) : null}
            onCancel={() => setCreating(false)}
            onSubmit={(input) => createKey.mutate(creationBody(input), { onSuccess: (result) => { setCreating(false); setCreated({ name: result.key.name, secret: result.secret }); } })} />
        ) : null}
      </Dialog>

      <Dialog open={editing !== null} title="Edit API key" onClose={() => setEditing(null)}>
        {editing === null ? null : (
          <KeyForm initial={editing} models={models.data?.data ?? []} projects={projects.data?.data ?? []} guardrails={guardrails.data?.data ?? []} mcpServers={mcpServers.data?.data ?? []} submitLabel="Save changes" busy={updateKey.isPending}
            serverError={updateKey.isError ? errorMessage(updateKey.error) : null}
            onCancel={() => setEditing(null)}
            onSubmit={(input) => updateKey.mutate({ id: editing.id, changes: input }, { onSuccess: () => setEditing(null) })} />
        )}
      </Dialog>

      <Dialog open={revoking !== null} title="Revoke API key" onClose={() => setRevoking(null)}>
        {revoking === null ? null : (
          <div className="stack">
            <p>Requests with <strong>{revoking.name}</strong> ({revoking.hint}) will be refused at once. This cannot be undone.</p>
            {revokeKey.isError ? <Alert tone="error">{errorMessage(revokeKey.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={() => setRevoking(null)}>Cancel</Button>
              <Button variant="danger" busy={revokeKey.isPending} onClick={() => revokeKey.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}>Revoke key</Button>
            </div>
          </div>
        )}
      </Dialog>

      <SecretDialog secret={created?.secret ?? null} name={created?.name ?? ''} onClose={() => setCreated(null)} />
    </div>
  );
}
