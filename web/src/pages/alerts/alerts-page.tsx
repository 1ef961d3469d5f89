import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ConsoleAlertsJson, KeyAlertThresholdJson } from '../../../../src/contract/index.js';
import { useApi, useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatCost, formatDateTime, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { TextField } from '../../ui/field';

type AlertSettings = ConsoleAlertsJson;

const KIND_TEXT: Record<string, string> = { balance: 'Balance', key_quota: 'Key quota', subscription_quota: 'Plan quota', key_paused: 'Key paused (webhooks)' };

function SettingsForm({ settings, editable }: { settings: AlertSettings; editable: boolean }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const [balance, setBalance] = useState(settings.alert_balance_usd === null ? '' : String(settings.alert_balance_usd));
  const [percent, setPercent] = useState(settings.alert_quota_percent === null ? '' : String(settings.alert_quota_percent));
  const [mail, setMail] = useState(settings.alert_mail);
  const save = useMutation({
    mutationFn: () => api.put<AlertSettings>('/api/console/alerts', {
      alert_mail: mail,
      alert_balance_usd: balance.trim() === '' ? null : Number(balance),
      alert_quota_percent: percent.trim() === '' ? null : Number(percent),
    }),
    onSuccess: (saved) => queryClient.setQueryData(['alerts'], saved),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form className="stack" onSubmit={submit} noValidate>
      {save.isError ? <Alert tone="error">{errorMessage(save.error)}</Alert> : null}
      {save.isSuccess ? <Alert tone="success">Saved. Each crossing alerts once.</Alert> : null}
      <div className="form-grid">
        <TextField label="Balance below (USD)" name="alert-balance" inputMode="decimal" value={balance} onChange={(event) => setBalance(event.target.value)} disabled={!editable}
          hint="Mail when the funds left drop below this. Empty: off." />
        <TextField label="Key quota used (%)" name="alert-quota" inputMode="numeric" value={percent} onChange={(event) => setPercent(event.target.value)} disabled={!editable}
          hint="Mail when any key with a quota (or your plan) reaches this share of it. Empty: off." />
      </div>
      <label className="checkbox-row"><input type="checkbox" name="alert-mail" checked={mail} disabled={!editable} onChange={(event) => setMail(event.target.checked)} /> Mail alerts to the account&apos;s email</label>
      <p className="field-hint">Alerts also go to the webhook and Slack-compatible endpoints that subscribe to them (Webhooks page).</p>
      {editable ? <div className="form-actions"><Button type="submit" variant="primary" busy={save.isPending}>Save alerts</Button></div> : <p className="field-hint">Only owners and admins change the alerts.</p>}
    </form>
  );
}

function KeyThresholdRow({ keyThreshold, editable }: { keyThreshold: KeyAlertThresholdJson; editable: boolean }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const [percent, setPercent] = useState(keyThreshold.alert_quota_percent === null ? '' : String(keyThreshold.alert_quota_percent));
  const save = useMutation({
    mutationFn: () => api.put<AlertSettings>(`/api/console/alerts/keys/${encodeURIComponent(keyThreshold.key_id)}`, {
      alert_quota_percent: percent.trim() === '' ? null : Number(percent),
    }),
    onSuccess: (saved) => queryClient.setQueryData(['alerts'], saved),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <tr>
      <th scope="row">{keyThreshold.name}<span className="key-meta mono">{keyThreshold.hint}</span></th>
      <td data-label="Quota" className="numeric">{formatUsd(keyThreshold.quota_usd)}</td>
      <td data-label="Alert at (%)">
        <form className="inline-form inline-form-compact" onSubmit={submit} noValidate aria-label={`Alert threshold of ${keyThreshold.name}`}>
          <input className="input-narrow" aria-label={`Quota used (%) for ${keyThreshold.name}`} inputMode="numeric" value={percent} disabled={!editable}
            placeholder={keyThreshold.effective_percent === null ? 'off' : `${keyThreshold.effective_percent} (account)`} onChange={(event) => setPercent(event.target.value)} />
          {editable ? <Button type="submit" busy={save.isPending}>Save<span className="visually-hidden"> for {keyThreshold.name}</span></Button> : null}
        </form>
        {save.isError ? <span className="field-error" role="alert">{errorMessage(save.error)}</span> : null}
        {save.isSuccess ? <span className="key-meta" role="status">Saved.</span> : null}
      </td>
    </tr>
  );
}

function KeyThresholdsCard({ keys, editable }: { keys: KeyAlertThresholdJson[]; editable: boolean }) {
  return (
    <Card title="Per-key thresholds">
      <p className="field-hint">A key&apos;s own share of its quota at which it alerts; empty uses the account&apos;s &quot;Key quota used&quot; above. Keys without a quota are not listed.</p>
      {keys.length === 0 ? <p className="empty">No key has a quota.</p> : (
        <div className="table-scroll">
          <table className="table table-cards" data-testid="key-thresholds">
            <thead><tr><th scope="col">Key</th><th scope="col" className="numeric">Quota</th><th scope="col">Alert at (%)</th></tr></thead>
            <tbody>{keys.map((key) => <KeyThresholdRow key={key.key_id} keyThreshold={key} editable={editable} />)}</tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

export function AlertsPage() {
  useDocumentTitle('Alerts');
  const api = useApi();
  const session = useSession();
  const settings = useQuery({ queryKey: ['alerts'], queryFn: () => api.get<AlertSettings>('/api/console/alerts') });
  const role = session.data?.role;
  const editable = role === 'owner' || role === 'admin';
  return (
    <div className="page stack">
      <PageHeader title="Alerts" description="Mail, webhooks or Slack before money or a key's quota runs out." />
      {settings.isPending ? <Loading /> : settings.isError ? <Alert tone="error">{errorMessage(settings.error)}</Alert> : (
        <>
          <Card title="Thresholds"><SettingsForm settings={settings.data} editable={editable} /></Card>
          {settings.data.keys.length === 0 && !editable ? null : <KeyThresholdsCard keys={settings.data.keys} editable={editable} />}
          <Card title="Alerts sent">
            {settings.data.alerts.length === 0 ? <p className="empty">No alert has fired.</p> : (
              <div className="table-scroll">
                <table className="table table-cards" data-testid="alerts-sent">
                  <thead><tr><th scope="col">What</th><th scope="col">State</th><th scope="col" className="numeric">Value</th><th scope="col" className="numeric">Threshold</th><th scope="col">Crossed</th></tr></thead>
                  <tbody>
                    {settings.data.alerts.map((alert) => (
                      <tr key={`${alert.kind}-${alert.subject_id}`}>
                        <th scope="row">{KIND_TEXT[alert.kind] ?? alert.kind}{alert.kind === 'key_quota' || alert.kind === 'key_paused' ? <span className="key-meta">{alert.subject_id}</span> : null}</th>
                        <td data-label="State"><Badge tone={alert.state === 'notified' ? 'success' : alert.state === 'pending' ? 'warning' : 'neutral'}>{alert.state === 'notified' ? (alert.kind === 'key_paused' ? 'sent' : 'mailed') : alert.state}</Badge></td>
                        <td data-label="Value" className="numeric">{formatCost(alert.value_usd)}</td>
                        <td data-label="Threshold" className="numeric">{formatCost(alert.threshold_usd)}</td>
                        <td data-label="Crossed">{formatDateTime(alert.crossed_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
        </>
      )}
    </div>
  );
}
