import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';

interface Model { id: string; kind: string; public: boolean; upstream: string | null; pricing: Record<string, number | null> }
interface Channel { id: string; name: string; models: Record<string, string>; enabled: boolean }

function price(value: number | null | undefined): string {
  return value == null ? '—' : `$${value}`;
}

function ModelForm({ onDone }: { onDone: () => void }) {
  const action = useOperatorAction();
  const [form, setForm] = useState({ id: '', input: '', output: '', public: true });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    action.mutate({ method: 'POST', path: 'admin/models', body: { id: form.id.trim(), public: form.public, pricing: { input_per_mtok: form.input, output_per_mtok: form.output } } }, { onSuccess: onDone });
  };
  return (
    <form className="stack" onSubmit={submit}>
      <div className="form-grid">
        <TextField label="Model id" value={form.id} onChange={(event) => setForm({ ...form, id: event.target.value })} required />
        <TextField label="Input, USD per million tokens" value={form.input} onChange={(event) => setForm({ ...form, input: event.target.value })} required inputMode="decimal" />
        <TextField label="Output, USD per million tokens" value={form.output} onChange={(event) => setForm({ ...form, output: event.target.value })} required inputMode="decimal" />
      </div>
      <label className="checkbox-row"><input type="checkbox" checked={form.public} onChange={(event) => setForm({ ...form, public: event.target.checked })} /> Public (listed in /v1/models)</label>
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions"><Button onClick={onDone}>Cancel</Button><Button variant="primary" type="submit" busy={action.isPending}>Create model</Button></div>
    </form>
  );
}

/** The catalog with prices per unit and the channels that serve each model. */
export function OperatorModelsPage() {
  useDocumentTitle('Models and prices');
  const me = useOperatorMe();
  const writable = canWrite(me.data);
  const models = useOperatorGet<{ data: Model[] }>('admin/models', { limit: '200' });
  const channels = useOperatorGet<{ data: Channel[] }>('admin/channels', { limit: '200' });
  const action = useOperatorAction();
  const [creating, setCreating] = useState(false);
  const servedBy = (id: string): string[] => (channels.data?.data ?? []).filter((channel) => id in channel.models || '*' in channel.models).map((channel) => channel.name);
  return (
    <div className="page stack">
      <PageHeader title="Models and prices" description="Prices per million tokens as billed; which channels serve each model."
        actions={writable ? <Button variant="primary" onClick={() => setCreating(true)}>Add model</Button> : undefined} />
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <Card>
        {models.isPending ? <Loading /> : null}
        {models.isError ? <Alert tone="error">{errorMessage(models.error)}</Alert> : null}
        {models.data === undefined ? null : (
          <div className="table-scroll"><table className="table"><caption className="visually-hidden">Models</caption>
            <thead><tr><th scope="col">Model</th><th scope="col">Visibility</th><th scope="col" className="numeric">Input / M</th><th scope="col" className="numeric">Output / M</th><th scope="col" className="numeric">Cached input / M</th><th scope="col">Channels</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>{models.data.data.map((model) => (
              <tr key={model.id} data-model-id={model.id}>
                <th scope="row" className="mono">{model.id}<span className="key-meta">{model.kind}{model.upstream === null ? '' : ` → ${model.upstream}`}</span></th>
                <td><Badge tone={model.public ? 'info' : 'neutral'}>{model.public ? 'public' : 'private'}</Badge></td>
                <td className="numeric">{price(model.pricing.input_per_mtok)}</td>
                <td className="numeric">{price(model.pricing.output_per_mtok)}</td>
                <td className="numeric">{price(model.pricing.cached_input_per_mtok)}</td>
                <td>{servedBy(model.id).join(', ') || <span className="field-hint">none</span>}</td>
                <td className="cell-actions">{writable ? <Button variant="ghost" onClick={() => action.mutate({ method: 'PATCH', path: `admin/models/${encodeURIComponent(model.id)}`, body: { public: !model.public } })}>{model.public ? 'Make private' : 'Make public'}</Button> : null}</td>
              </tr>
            ))}</tbody></table></div>
        )}
      </Card>
      <Dialog open={creating} title="Add a model" onClose={() => setCreating(false)}>{creating ? <ModelForm onDone={() => setCreating(false)} /> : null}</Dialog>
    </div>
  );
}
