import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { WebhookDeliveryListJson, WebhookEndpointJson, WebhookEndpointListJson } from '../../../../src/contract/index.js';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatDateTime } from '../../format/format';
import { Button } from '../../ui/button';
import { CopyButton } from '../../ui/copy-button';
import { Dialog } from '../../ui/dialog';
import { Alert, Badge, Card, Loading } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';

/** An endpoint as listed, or with its secret right after creation or rotation. */
type Endpoint = WebhookEndpointJson & { secret?: string };
type EndpointList = WebhookEndpointListJson;

const STATE_TONE = { pending: 'warning', succeeded: 'success', failed: 'danger' } as const;

/** The signing secret, shown once after creation or rotation; closing needs an explicit press. */
function WebhookSecretDialog({ endpoint, onClose }: { endpoint: Endpoint | null; onClose: () => void }) {
  return (
    <Dialog open={endpoint !== null} title="Signing secret" onClose={onClose} requireExplicitClose>
      {endpoint?.secret === undefined ? null : (
        <div className="stack">
          <Alert tone="warning">Copy the signing secret of <strong>{endpoint.url}</strong> now: it is shown only once.</Alert>
          <div className="secret-row">
            <code className="secret" data-testid="webhook-secret">{endpoint.secret}</code>
            <CopyButton text={endpoint.secret} label="Copy secret" />
          </div>
          {endpoint.previous_secret_valid_until === null ? null : (
            <p className="field-hint">Deliveries are signed with the old secret too until {formatDateTime(endpoint.previous_secret_valid_until)}.</p>
          )}
          <div className="form-actions"><Button variant="primary" onClick={onClose}>I have copied the secret</Button></div>
        </div>
      )}
    </Dialog>
  );
}

function EndpointForm({ eventTypes, basePath, onCreated }: { eventTypes: string[]; basePath: string; onCreated: (endpoint: Endpoint) => void }) {
  const api = useApi();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [format, setFormat] = useState<'standard' | 'slack'>('standard');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const create = useMutation({
    mutationFn: () => api.post<Endpoint>(basePath, { url, description, format, event_types: [...chosen] }),
    onSuccess: onCreated,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const toggle = (type: string) => {
    const next = new Set(chosen);
    if (next.has(type)) next.delete(type);
    else next.add(type);
    setChosen(next);
  };
  return (
    <form className="stack" onSubmit={submit} noValidate>
      {create.isError ? <Alert tone="error">{errorMessage(create.error)}</Alert> : null}
      <TextField label="URL" name="webhook-url" type="url" required value={url} onChange={(event) => setUrl(event.target.value)} placeholder="https://example.com/hooks/gateway"
        hint="https only; the gateway never follows redirects." />
      <TextField label="Description" name="webhook-description" value={description} onChange={(event) => setDescription(event.target.value)} />
      <SelectField label="Format" name="webhook-format" value={format} onChange={(event) => setFormat(event.target.value === 'slack' ? 'slack' : 'standard')}
        options={[{ value: 'standard', label: 'Signed JSON (Standard Webhooks)' }, { value: 'slack', label: 'Slack-compatible incoming webhook' }]} />
      <fieldset className="stack">
        <legend>Events (none chosen: every event)</legend>
        {eventTypes.map((type) => (
          <label key={type} className="checkbox-row"><input type="checkbox" checked={chosen.has(type)} onChange={() => toggle(type)} /> <code>{type}</code></label>
        ))}
      </fieldset>
      <div className="form-actions"><Button type="submit" variant="primary" busy={create.isPending}>Add endpoint</Button></div>
    </form>
  );
}

function DeliveryLog({ basePath, endpoint }: { basePath: string; endpoint: Endpoint }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const key = ['webhook-deliveries', basePath, endpoint.id];
  const deliveries = useQuery({ queryKey: key, queryFn: () => api.get<WebhookDeliveryListJson>(`${basePath}/${encodeURIComponent(endpoint.id)}/deliveries`), refetchInterval: 5000 });
  const resend = useMutation({
    mutationFn: (id: string) => api.post(`${basePath}/${encodeURIComponent(endpoint.id)}/deliveries/${encodeURIComponent(id)}/resend`),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  return (
    <Card title={<>Deliveries to <span className="mono wrap-anywhere">{endpoint.url}</span></>}>
      {resend.isError ? <Alert tone="error">{errorMessage(resend.error)}</Alert> : null}
      {deliveries.isPending ? <Loading /> : deliveries.isError ? <Alert tone="error">{errorMessage(deliveries.error)}</Alert> : deliveries.data.data.length === 0 ? (
        <p className="empty">Nothing delivered yet. Send a test event to try the endpoint.</p>
      ) : (
        <div className="table-scroll">
          <table className="table table-cards">
            <thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col" className="numeric">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {deliveries.data.data.map((delivery) => (
                <tr key={delivery.id}>
                  <th scope="row"><code>{delivery.event_type}</code><span className="key-meta mono">{delivery.event_id}</span></th>
                  <td data-label="State"><Badge tone={STATE_TONE[delivery.state]}>{delivery.state}</Badge>{delivery.next_attempt_at === null ? null : <span className="key-meta">next {formatDateTime(delivery.next_attempt_at)}</span>}</td>
                  <td className="numeric" data-label="Attempts">{delivery.attempts}</td>
                  <td data-label="Last answer">
                    {delivery.log.length === 0 ? '—' : (
                      <details>
                        <summary>{delivery.last_status ?? 'no answer'}{delivery.log[0] === undefined ? null : ` · ${delivery.log[0].latency_ms} ms`}</summary>
                        <ol className="stack">
                          {delivery.log.map((attempt) => (
                            <li key={attempt.attempt}>
                              Attempt {attempt.attempt} at {formatDateTime(attempt.started_at)}: {attempt.status_code ?? 'no answer'} in {attempt.latency_ms} ms
                              {attempt.error === null ? null : <span className="key-meta">{attempt.error}</span>}
                              {attempt.response_excerpt === null ? null : <code className="key-meta">{attempt.response_excerpt}</code>}
                            </li>
                          ))}
                        </ol>
                      </details>
                    )}
                  </td>
                  <td data-label="Created">{formatDateTime(delivery.created_at)}</td>
                  <td className="cell-actions"><Button onClick={() => resend.mutate(delivery.id)} busy={resend.isPending && resend.variables === delivery.id}>Resend<span className="visually-hidden"> {delivery.event_id}</span></Button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

/**
 * Webhook endpoints of one owner (the account's through the console API, or the operator's through the admin
 * bridge): add, enable or disable, send a test event, rotate the secret, delete, and the delivery log with resend.
 */
export function WebhooksPanel({ basePath }: { basePath: string }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const key = ['webhooks', basePath];
  const list = useQuery({ queryKey: key, queryFn: () => api.get<EndpointList>(basePath) });
  const [adding, setAdding] = useState(false);
  const [shownSecret, setShownSecret] = useState<Endpoint | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const path = (endpoint: Endpoint, suffix = '') => `${basePath}/${encodeURIComponent(endpoint.id)}${suffix}`;
  const refresh = () => queryClient.invalidateQueries({ queryKey: key });
  const action = useMutation({
    mutationFn: async ({ endpoint, kind }: { endpoint: Endpoint; kind: 'toggle' | 'test' | 'rotate' | 'delete' }) => {
      switch (kind) {
        case 'toggle': await api.patch(path(endpoint), { enabled: !endpoint.enabled }); return null;
        case 'test': await api.post(path(endpoint, '/test')); return 'A test event is on its way.';
        case 'rotate': setShownSecret(await api.post<Endpoint>(path(endpoint, '/rotate-secret'))); return null;
        case 'delete': await api.delete(path(endpoint)); if (selected === endpoint.id) setSelected(null); return 'Endpoint deleted.';
      }
    },
    onSuccess: (message) => setNotice(message),
    onSettled: () => { void refresh(); void queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', basePath] }); },
  });
  if (list.isPending) return <Loading />;
  if (list.isError) return <Alert tone="error">{errorMessage(list.error)}</Alert>;
  const chosen = list.data.data.find((endpoint) => endpoint.id === selected) ?? null;
  return (
    <div className="stack">
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      {notice === null ? null : <Alert tone="success">{notice}</Alert>}
      <Card title="Endpoints" actions={<Button variant="primary" onClick={() => setAdding(true)}>Add endpoint</Button>}>
        {list.data.data.length === 0 ? <p className="empty">No endpoint yet.</p> : (
          <div className="table-scroll">
            <table className="table table-cards">
              <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {list.data.data.map((endpoint) => (
                  <tr key={endpoint.id}>
                    <th scope="row" className="column-wide"><span className="mono wrap-anywhere">{endpoint.url}</span>{endpoint.description === '' ? null : <span className="key-meta">{endpoint.description}</span>}
                      {endpoint.format === 'slack' ? <span className="key-meta">Slack-compatible</span> : null}</th>
                    <td className="column-wide" data-label="Events">{endpoint.event_types.length === 0 ? 'every event' : endpoint.event_types.map((type) => <code key={type} className="key-meta">{type}</code>)}</td>
                    <td data-label="State"><Badge tone={endpoint.enabled ? 'success' : 'neutral'}>{endpoint.enabled ? 'enabled' : 'disabled'}</Badge></td>
                    <td className="cell-actions">
                      <div className="row-actions">
                        <Button onClick={() => setSelected(endpoint.id)}>Deliveries</Button>
                        <Button onClick={() => action.mutate({ endpoint, kind: 'test' })} disabled={!endpoint.enabled}>Send test</Button>
                        <Button onClick={() => action.mutate({ endpoint, kind: 'toggle' })}>{endpoint.enabled ? 'Disable' : 'Enable'}</Button>
                        <Button onClick={() => action.mutate({ endpoint, kind: 'rotate' })}>Rotate secret</Button>
                        <Button variant="danger" onClick={() => action.mutate({ endpoint, kind: 'delete' })}>Delete<span className="visually-hidden"> {endpoint.url}</span></Button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      {chosen === null ? null : <DeliveryLog basePath={basePath} endpoint={chosen} />}
      <Dialog open={adding} title="Add a webhook endpoint" onClose={() => setAdding(false)}>
        {adding ? <EndpointForm eventTypes={list.data.event_types} basePath={basePath} onCreated={(endpoint) => { setAdding(false); setShownSecret(endpoint); setSelected(endpoint.id); void refresh(); }} /> : null}
      </Dialog>
      <WebhookSecretDialog endpoint={shownSecret} onClose={() => setShownSecret(null)} />
    </div>
  );
}
