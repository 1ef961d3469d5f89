import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import { formatMilliseconds } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { SelectField, TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';

interface Channel {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  api_key_hints: string[];
  models: Record<string, string>;
  priority: number;
  weight: number;
  enabled: boolean;
}

interface Health {
  channel_id: string;
  status: 'operational' | 'degraded' | 'down' | 'disabled' | string;
  breaker: { state: string; recent: { successes: number; failures: number }; last_error: { class: string; at: string } | null };
}

interface TestResult {
  ok: boolean;
  outcome: string;
  model: string;
  latency_ms: number;
  upstream_status: number | null;
  message: string;
}

interface ChannelType {
  type: string;
  protocol: string;
}

function healthTone(status: string): 'success' | 'warning' | 'danger' | 'neutral' {
  if (status === 'operational') return 'success';
  if (status === 'degraded') return 'warning';
  if (status === 'down') return 'danger';
  return 'neutral';
}

function ChannelForm({ channel, onDone }: { channel: Channel | null; onDone: () => void }) {
  const action = useOperatorAction();
  // The types this gateway build knows, from its upstream registry (only a new channel chooses one).
  const types = useOperatorGet<{ data: ChannelType[] }>('admin/channel-types', undefined, { enabled: channel === null });
  const [form, setForm] = useState({
    name: channel?.name ?? '', type: channel?.type ?? 'openai', base_url: channel?.base_url ?? '', api_key: '',
    models: channel === null ? '' : Object.keys(channel.models).join(', '), priority: String(channel?.priority ?? 0), weight: String(channel?.weight ?? 1),
  });
  const set = (field: keyof typeof form) => (event: { target: { value: string } }) => setForm({ ...form, [field]: event.target.value });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const models = form.models.split(',').map((model) => model.trim()).filter((model) => model !== '');
    const body: Record<string, unknown> = {
      name: form.name, base_url: form.base_url.trim() === '' ? null : form.base_url.trim(), models,
      priority: Number(form.priority), weight: Number(form.weight),
    };
    if (channel === null) body.type = form.type;
    // Secrets are write-only: an empty field keeps the stored key; a new value replaces it.
    if (form.api_key !== '') body.api_key = form.api_key;
    action.mutate({ method: channel === null ? 'POST' : 'PATCH', path: channel === null ? 'admin/channels' : `admin/channels/${encodeURIComponent(channel.id)}`, body }, { onSuccess: onDone });
  };
  return (
    <form className="stack" onSubmit={submit}>
      <div className="form-grid">
        <TextField label="Name" value={form.name} onChange={set('name')} required maxLength={100} />
        {channel === null ? <SelectField label="Type" value={form.type} onChange={set('type')} options={(types.data?.data ?? [{ type: form.type, protocol: '' }]).map(({ type }) => ({ value: type, label: type }))} /> : null}
        <TextField label="Base URL" value={form.base_url} onChange={set('base_url')} placeholder="Vendor default" hint="Leave empty for the vendor's own address." />
        <TextField label={channel === null ? 'API key' : 'New API key'} type="password" autoComplete="off" value={form.api_key} onChange={set('api_key')}
          hint={channel === null ? 'Stored sealed; never shown again.' : `Now ${channel.api_key_hints.join(', ') || 'none'}. Leave empty to keep it.`} />
        <TextField label="Models" value={form.models} onChange={set('models')} hint="Comma-separated; * serves the vendor's catalog." />
        <TextField label="Priority" type="number" value={form.priority} onChange={set('priority')} hint="Higher first." />
        <TextField label="Weight" type="number" min={0} value={form.weight} onChange={set('weight')} hint="Share among equal priority." />
      </div>
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions">
        <Button onClick={onDone}>Cancel</Button>
        <Button variant="primary" type="submit" busy={action.isPending}>{channel === null ? 'Create channel' : 'Save channel'}</Button>
      </div>
    </form>
  );
}

/** Upstream channels with live health, the test probe, and create/edit/disable. */
export function OperatorChannelsPage() {
  useDocumentTitle('Channels');
  const me = useOperatorMe();
  const writable = canWrite(me.data);
  const channels = useOperatorGet<{ data: Channel[] }>('admin/channels', { limit: '200' }, { refreshMs: 10_000 });
  const health = useOperatorGet<{ channels: Health[] }>('admin/health', undefined, { refreshMs: 10_000 });
  const action = useOperatorAction<TestResult>();
  const [editing, setEditing] = useState<Channel | 'new' | null>(null);
  const [results, setResults] = useState<Record<string, TestResult | string>>({});
  const healthOf = new Map((health.data?.channels ?? []).map((report) => [report.channel_id, report]));

  const test = (channel: Channel) => {
    setResults({ ...results, [channel.id]: 'Testing…' });
    action.mutate({ method: 'POST', path: `admin/channels/${encodeURIComponent(channel.id)}/test`, body: {} }, {
      onSuccess: (result) => setResults((all) => ({ ...all, [channel.id]: result })),
      onError: (error) => setResults((all) => ({ ...all, [channel.id]: errorMessage(error) })),
    });
  };

  return (
    <div className="page stack">
      <PageHeader title="Channels" description="Upstream accounts the gateway routes to: higher priority first, weights share traffic among equals."
        actions={writable ? <Button variant="primary" onClick={() => setEditing('new')}>Add channel</Button> : undefined} />
      <Card>
        {channels.isPending ? <Loading /> : null}
        {channels.isError ? <Alert tone="error">{errorMessage(channels.error)}</Alert> : null}
        {channels.data?.data.length === 0 ? <p className="empty">No channels yet.</p> : null}
        {channels.data === undefined || channels.data.data.length === 0 ? null : (
          <div className="table-scroll">
            <table className="table">
              <caption className="visually-hidden">Channels</caption>
              <thead><tr><th scope="col">Channel</th><th scope="col">Health</th><th scope="col">Models</th><th scope="col" className="numeric">Priority / weight</th><th scope="col">Test</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {channels.data.data.map((channel) => {
                  const report = healthOf.get(channel.id);
                  const result = results[channel.id];
                  return (
                    <tr key={channel.id} data-channel-id={channel.id}>
                      <th scope="row"><span className="key-name">{channel.name}</span><span className="key-meta mono">{channel.type} · {channel.api_key_hints.join(', ')}</span></th>
                      <td data-label="Health">
                        <Badge tone={healthTone(report?.status ?? (channel.enabled ? 'operational' : 'disabled'))}>{report?.status ?? (channel.enabled ? 'unknown' : 'disabled')}</Badge>
                        {report === undefined ? null : <span className="key-meta">Breaker {report.breaker.state} · last minute {report.breaker.recent.successes} ok, {report.breaker.recent.failures} failed{report.breaker.last_error === null ? '' : ` · last error ${report.breaker.last_error.class}`}</span>}
                      </td>
                      <td data-label="Models" className="mono">{Object.keys(channel.models).join(', ')}</td>
                      <td className="numeric">{channel.priority} / {channel.weight}</td>
                      <td data-label="Test" aria-live="polite">
                        {writable ? <Button variant="ghost" onClick={() => test(channel)} aria-label={`Test ${channel.name}`}>Test</Button> : null}
                        {result === undefined ? null : typeof result === 'string' ? <span className="key-meta">{result}</span> : (
                          <span className="key-meta" data-testid="channel-test-result">
                            <Badge tone={result.ok ? 'success' : 'danger'}>{result.ok ? 'OK' : result.outcome}</Badge> {result.model} in {formatMilliseconds(result.latency_ms)}{result.ok ? '' : ` — ${result.message}`}
                          </span>
                        )}
                      </td>
                      <td className="cell-actions">
                        {writable ? (
                          <>
                            <Button variant="ghost" onClick={() => setEditing(channel)} aria-label={`Edit ${channel.name}`}>Edit</Button>
                            <Button variant="ghost" onClick={() => action.mutate({ method: 'PATCH', path: `admin/channels/${encodeURIComponent(channel.id)}`, body: { enabled: !channel.enabled } })} aria-label={`${channel.enabled ? 'Disable' : 'Enable'} ${channel.name}`}>{channel.enabled ? 'Disable' : 'Enable'}</Button>
                          </>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Dialog open={editing !== null} title={editing === 'new' ? 'Add a channel' : 'Edit channel'} onClose={() => setEditing(null)}>
        {editing === null ? null : <ChannelForm channel={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      </Dialog>
    </div>
  );
}
