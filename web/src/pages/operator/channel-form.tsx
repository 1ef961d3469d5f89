import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import { Button } from '../../ui/button';
import { FieldFrame, SelectField, TextField } from '../../ui/field';
import { Alert } from '../../ui/feedback';
import { useOperatorAction } from './operator-queries';
import type { Channel, ChannelFormField, ChannelType } from '../../api/operator-types';

interface MappingRow { client: string; upstream: string }
interface NewHeader { name: string; value: string }

/** A setting as the form holds it: text for every input, 'true'/'false' for a checkbox, '' when unset. */
function settingText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function settingValue(field: ChannelFormField, text: string): unknown {
  if (field.input === 'boolean') return text === 'true';
  if (field.input === 'number') return Number(text);
  return text.trim();
}

function settingsTextOf(fields: ChannelFormField[], settings: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(fields.map((field) => [field.name, settingText(settings[field.name])]));
}

function mappingOf(rows: MappingRow[]): Record<string, string> {
  const models: Record<string, string> = {};
  for (const row of rows) {
    const client = row.client.trim();
    if (client !== '') models[client] = row.upstream.trim();
  }
  return models;
}

function sameMapping(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => key in b && a[key] === b[key]);
}

/**
 * Creates a channel, or changes one. A change sends only what the operator changed here: a field left alone is never
 * sent back (the model mapping, settings of other types, header values the API never shows all stay as stored).
 */
export function ChannelForm({ channel, types, onDone }: { channel: Channel | null; types: ChannelType[]; onDone: () => void }) {
  const action = useOperatorAction();
  const [type, setType] = useState(channel?.type ?? 'openai');
  const spec = types.find((entry) => entry.type === type)?.form ?? null;
  const fields = spec?.settings ?? [];
  const initialSettings = settingsTextOf(fields, channel?.settings ?? {});
  const [basics, setBasics] = useState({ name: channel?.name ?? '', base_url: channel?.base_url ?? '', secret: '', priority: String(channel?.priority ?? 0), weight: String(channel?.weight ?? 1) });
  const [settings, setSettings] = useState<Record<string, string>>(initialSettings);
  const [mapping, setMapping] = useState<MappingRow[]>(() => {
    const rows = Object.entries(channel?.models ?? {}).map(([client, upstream]) => ({ client, upstream }));
    return rows.length === 0 ? [{ client: '', upstream: '' }] : rows;
  });
  const [removedHeaders, setRemovedHeaders] = useState<ReadonlySet<string>>(new Set());
  const [newHeaders, setNewHeaders] = useState<NewHeader[]>([]);
  const [notice, setNotice] = useState('');
  const set = (field: keyof typeof basics) => (event: { target: { value: string } }) => setBasics({ ...basics, [field]: event.target.value });
  const settingShown = (name: string): string => (name in settings ? settings[name] ?? '' : initialSettings[name] ?? '');

  const changedSettings = (): Record<string, unknown> | null => {
    const changed = fields.filter((field) => settingShown(field.name) !== (initialSettings[field.name] ?? ''));
    if (changed.length === 0) return null;
    // Settings the form does not show (of other types, or set through the API) are kept as they are.
    const next: Record<string, unknown> = { ...(channel?.settings ?? {}) };
    for (const field of changed) {
      const text = settingShown(field.name);
      if (text === '') delete next[field.name];
      else next[field.name] = settingValue(field, text);
    }
    return next;
  };

  const bodyOf = (): Record<string, unknown> => {
    const models = mappingOf(mapping);
    const baseUrl = basics.base_url.trim() === '' ? null : basics.base_url.trim();
    const headerAdditions = Object.fromEntries(newHeaders.filter((header) => header.name.trim() !== '').map((header) => [header.name.trim(), header.value]));
    if (channel === null) {
      const settingsIn = changedSettings();
      return {
        name: basics.name, type, models, priority: Number(basics.priority), weight: Number(basics.weight),
        ...(baseUrl === null ? {} : { base_url: baseUrl }),
        ...(basics.secret === '' ? {} : { api_key: basics.secret }),
        ...(settingsIn === null ? {} : { settings: settingsIn }),
        ...(Object.keys(headerAdditions).length === 0 ? {} : { headers: headerAdditions }),
      };
    }
    const body: Record<string, unknown> = {};
    if (basics.name !== channel.name) body.name = basics.name;
    if (baseUrl !== channel.base_url) body.base_url = baseUrl;
    // Secrets are write-only: an empty field keeps the stored key; a new value replaces it.
    if (basics.secret !== '') body.api_key = basics.secret;
    if (!sameMapping(models, channel.models)) body.models = models;
    if (Number(basics.priority) !== channel.priority) body.priority = Number(basics.priority);
    if (Number(basics.weight) !== channel.weight) body.weight = Number(basics.weight);
    const settingsOut = changedSettings();
    if (settingsOut !== null) body.settings = settingsOut;
    const headerChanges: Record<string, string | null> = { ...Object.fromEntries([...removedHeaders].map((name) => [name, null])), ...headerAdditions };
    if (Object.keys(headerChanges).length > 0) body.header_changes = headerChanges;
    return body;
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = bodyOf();
    if (channel !== null && Object.keys(body).length === 0) {
      setNotice('Nothing changed.');
      return;
    }
    action.mutate({ method: channel === null ? 'POST' : 'PATCH', path: channel === null ? 'admin/channels' : `admin/channels/${encodeURIComponent(channel.id)}`, body }, { onSuccess: onDone });
  };

  const credentialLabel = spec?.credential === 'json' ? 'Credentials (JSON)' : 'API key';
  const secretHint = channel === null
    ? `${spec?.credential_hint ?? (spec?.credential === 'optional-key' ? 'Optional for a local server.' : 'Several keys, comma-separated, rotate.')} Stored sealed; never shown again.`
    : `Now ${channel.api_key_hints.join(', ') || 'none'}. Leave empty to keep it.`;

  return (
    <form className="stack" onSubmit={submit} aria-label={channel === null ? 'New channel' : `Channel ${channel.name}`}>
      <div className="form-grid">
        <TextField label="Name" value={basics.name} onChange={set('name')} required maxLength={100} />
        {channel === null ? (
          <SelectField label="Type" value={type} onChange={(event) => { setType(event.target.value); setSettings({}); }}
            options={(types.length === 0 ? [{ type }] : types).map((entry) => ({ value: entry.type, label: entry.type }))} />
        ) : null}
        <TextField label="Base URL" value={basics.base_url} onChange={set('base_url')} required={spec?.base_url === 'required'}
          placeholder={spec?.base_url === 'required' ? '' : 'Vendor default'} hint={spec?.base_url_hint ?? "Leave empty for the vendor's own address."} />
        {spec?.credential === 'json' ? (
          <FieldFrame label={channel === null ? credentialLabel : `New ${credentialLabel.toLowerCase()}`} hint={secretHint}>
            {({ inputId, describedBy }) => <textarea id={inputId} aria-describedby={describedBy} rows={3} autoComplete="off" spellCheck={false} value={basics.secret} onChange={set('secret')} className="mono" />}
          </FieldFrame>
        ) : (
          <TextField label={channel === null ? credentialLabel : `New ${credentialLabel}`} type="password" autoComplete="off" value={basics.secret} onChange={set('secret')} hint={secretHint} />
        )}
        <TextField label="Priority" type="number" value={basics.priority} onChange={set('priority')} hint="Higher first." />
        <TextField label="Weight" type="number" min={0} value={basics.weight} onChange={set('weight')} hint="Share among equal priority." />
      </div>

      <fieldset className="stack plain-fieldset">
        <legend>Models</legend>
        <p className="field-hint">The id clients call, and the upstream's own name for it{spec?.upstream_model_hint == null ? '' : ` (${spec.upstream_model_hint})`}; an empty upstream id sends the client id. <span className="mono">*</span> serves the vendor's catalog.</p>
        <table className="table table-cards mapping-table">
          <caption className="visually-hidden">Model mapping</caption>
          <thead><tr><th scope="col">Client model id</th><th scope="col">Upstream model id</th><th scope="col"><span className="visually-hidden">Remove</span></th></tr></thead>
          <tbody>{mapping.map((row, index) => (
            <tr key={index}>
              <td className="cell-full" data-label="Client model id"><input aria-label={`Client model id ${index + 1}`} value={row.client} className="mono" onChange={(event) => setMapping(mapping.map((entry, at) => (at === index ? { ...entry, client: event.target.value } : entry)))} /></td>
              <td className="cell-full" data-label="Upstream model id"><input aria-label={`Upstream model id ${index + 1}`} value={row.upstream} className="mono" placeholder="same" onChange={(event) => setMapping(mapping.map((entry, at) => (at === index ? { ...entry, upstream: event.target.value } : entry)))} /></td>
              <td className="cell-actions"><Button variant="ghost" onClick={() => setMapping(mapping.filter((_, at) => at !== index))} aria-label={`Remove model row ${index + 1}`}>Remove</Button></td>
            </tr>
          ))}</tbody>
        </table>
        <div><Button onClick={() => setMapping([...mapping, { client: '', upstream: '' }])}>Add a model</Button></div>
      </fieldset>

      {fields.length === 0 ? null : (
        <fieldset className="stack plain-fieldset">
          <legend>Settings of {type}</legend>
          <div className="form-grid">
            {fields.map((field) => {
              const value = settingShown(field.name);
              const change = (next: string) => setSettings({ ...settings, [field.name]: next });
              if (field.input === 'boolean') {
                return <label key={field.name} className="checkbox-row"><input type="checkbox" checked={value === 'true'} onChange={(event) => change(event.target.checked ? 'true' : 'false')} /> {field.label}</label>;
              }
              if (field.input === 'select') {
                return <SelectField key={field.name} label={field.label} value={value} onChange={(event) => change(event.target.value)} {...(field.hint === null ? {} : { hint: field.hint })}
                  options={[{ value: '', label: 'Default' }, ...(field.options ?? []).map((option) => ({ value: option, label: option }))]} />;
              }
              return <TextField key={field.name} label={field.label} value={value} onChange={(event) => change(event.target.value)} required={field.required}
                type={field.input === 'number' ? 'number' : 'text'} placeholder={field.placeholder ?? ''} {...(field.hint === null ? {} : { hint: field.hint })} />;
            })}
          </div>
        </fieldset>
      )}

      <fieldset className="stack plain-fieldset">
        <legend>Custom headers</legend>
        <p className="field-hint">Sent with every request to the upstream. Values are write-only.</p>
        {Object.entries(channel?.headers ?? {}).map(([name, hint]) => (
          <div key={name} className="checkbox-row">
            <span className="mono">{name}: {hint}</span>
            <Button variant="ghost" onClick={() => { const next = new Set(removedHeaders); if (next.has(name)) next.delete(name); else next.add(name); setRemovedHeaders(next); }}>
              {removedHeaders.has(name) ? `Keep ${name}` : `Remove ${name}`}
            </Button>
          </div>
        ))}
        {newHeaders.map((header, index) => (
          <div key={index} className="form-grid">
            <TextField label={`Header name ${index + 1}`} value={header.name} pattern="[A-Za-z0-9-]+" onChange={(event) => setNewHeaders(newHeaders.map((entry, at) => (at === index ? { ...entry, name: event.target.value } : entry)))} />
            <TextField label={`Header value ${index + 1}`} type="password" autoComplete="off" value={header.value} onChange={(event) => setNewHeaders(newHeaders.map((entry, at) => (at === index ? { ...entry, value: event.target.value } : entry)))} />
          </div>
        ))}
        <div><Button onClick={() => setNewHeaders([...newHeaders, { name: '', value: '' }])}>Add a header</Button></div>
      </fieldset>

      {notice === '' ? null : <Alert tone="info">{notice}</Alert>}
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions">
        <Button onClick={onDone}>Cancel</Button>
        <Button variant="primary" type="submit" busy={action.isPending}>{channel === null ? 'Create channel' : 'Save channel'}</Button>
      </div>
    </form>
  );
}
