import { useState } from 'react';
import { errorMessage } from '../../api/client';
import { formatMilliseconds } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import type { AdminListPage, Channel, ChannelTestResult, ChannelTypeList, GatewayHealth } from '../../api/operator-types';
import { ChannelForm } from './channel-form';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';

function healthTone(status: string): 'success' | 'warning' | 'danger' | 'neutral' {
  if (status === 'operational') return 'success';
  if (status === 'degraded') return 'warning';
  if (status === 'down') return 'danger';
  return 'neutral';
}

/** Public models that only this channel serves: what deleting it leaves unroutable. */
function onlyServedBy(channel: Channel, all: Channel[]): string[] {
  return Object.keys(channel.models).filter((model) => model !== '*' && !all.some((other) => other.id !== channel.id && other.enabled && (model in other.models)));
}

/** Upstream channels with live health, the test probe (one or all), and create/edit/disable/delete. */
export function OperatorChannelsPage() {
  useDocumentTitle('Channels');
  const me = useOperatorMe();
  const writable = canWrite(me.data);
  const channels = useOperatorGet<AdminListPage<Channel>>('admin/channels', { limit: '200' }, { refreshMs: 10_000 });
  const health = useOperatorGet<GatewayHealth>('admin/health', undefined, { refreshMs: 10_000 });
  const types = useOperatorGet<ChannelTypeList>('admin/channel-types');
  const action = useOperatorAction<ChannelTestResult>();
  const removal = useOperatorAction();
  const [editing, setEditing] = useState<Channel | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Channel | null>(null);
  const [results, setResults] = useState<Record<string, ChannelTestResult | string>>({});
  const healthOf = new Map((health.data?.channels ?? []).map((report) => [report.channel_id, report]));

  // Each probe answers through its own promise: a mutation's per-call callbacks fire for the latest call only, and
  // "Test all" runs several at once.
  const test = (channel: Channel) => {
    setResults((all) => ({ ...all, [channel.id]: 'Testing…' }));
    action.mutateAsync({ method: 'POST', path: `admin/channels/${encodeURIComponent(channel.id)}/test`, body: {} }).then(
      (result) => setResults((all) => ({ ...all, [channel.id]: result })),
      (error: unknown) => setResults((all) => ({ ...all, [channel.id]: errorMessage(error) })),
    );
  };

  // Every channel at once, as the probe of one does: each answers in its own row.
  const testAll = () => {
    for (const channel of channels.data?.data ?? []) if (channel.enabled) test(channel);
  };

  return (
    <div className="page stack">
      <PageHeader title="Channels" description="Upstream accounts the gateway routes to: higher priority first, weights share traffic among equals."
        actions={writable ? (
          <>
            <Button onClick={testAll} disabled={(channels.data?.data.length ?? 0) === 0}>Test all channels</Button>
            <Button variant="primary" onClick={() => setEditing('new')}>Add channel</Button>
          </>
        ) : undefined} />
      <Card>
        {channels.isPending ? <Loading /> : null}
        {channels.isError ? <Alert tone="error">{errorMessage(channels.error)}</Alert> : null}
        {channels.data?.data.length === 0 ? <p className="empty">No channels yet.</p> : null}
        {channels.data === undefined || channels.data.data.length === 0 ? null : (
          <div className="table-scroll">
            <table className="table table-cards" data-testid="channels-table">
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
                      <td data-label="Models" className="mono wrap-anywhere">{Object.entries(channel.models).map(([model, upstream]) => (upstream === '' || upstream === model ? model : `${model} → ${upstream}`)).join(', ')}</td>
                      <td data-label="Priority / weight" className="numeric">{channel.priority} / {channel.weight}</td>
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
                            <Button variant="ghost" onClick={() => { removal.reset(); setDeleting(channel); }} aria-label={`Delete ${channel.name}`}>Delete</Button>
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
        {editing === null ? null : <ChannelForm channel={editing === 'new' ? null : editing} types={types.data?.data ?? []} onDone={() => setEditing(null)} />}
      </Dialog>
      <Dialog open={deleting !== null} title="Delete channel" onClose={() => setDeleting(null)}>
        {deleting === null ? null : (
          <div className="stack">
            <p>Delete <strong>{deleting.name}</strong>? Its upstream keys are forgotten; usage already logged keeps its id.</p>
            {onlyServedBy(deleting, channels.data?.data ?? []).length === 0 ? null : (
              <Alert tone="warning">No other enabled channel serves {onlyServedBy(deleting, channels.data?.data ?? []).join(', ')}: calls to {onlyServedBy(deleting, channels.data?.data ?? []).length === 1 ? 'it' : 'them'} will fail until one does.</Alert>
            )}
            {removal.isError ? <Alert tone="error">{errorMessage(removal.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={() => setDeleting(null)}>Cancel</Button>
              <Button variant="danger" busy={removal.isPending} onClick={() => removal.mutate({ method: 'DELETE', path: `admin/channels/${encodeURIComponent(deleting.id)}` }, { onSuccess: () => setDeleting(null) })}>Delete {deleting.name}</Button>
            </div>
          </div>
        )}
      </Dialog>
    </div>
  );
}
