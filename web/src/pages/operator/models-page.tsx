import { useState } from 'react';
import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { SelectField, TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import type { AdminListPage, CatalogEntry, CatalogImport, CatalogList, Channel } from '../../api/operator-types';
import { ModelForm, type Model } from './model-form';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';

/** Strategy, fallbacks, limits and cache of a model in one line. */
function routingSummary(model: Model): string {
  return [
    model.routing === undefined || model.routing.strategy === 'weighted' ? null : model.routing.strategy,
    model.fallbacks === undefined || model.fallbacks.length === 0 ? null : `falls back to ${model.fallbacks.join(', ')}`,
    model.limits?.rpm == null ? null : `${model.limits.rpm} RPM`,
    model.limits?.tpm == null ? null : `${model.limits.tpm} TPM`,
    model.cache == null ? null : `cached ${model.cache.ttl_seconds} s`,
  ].filter((part) => part !== null).join(' · ');
}

function price(value: number | null | undefined): string {
  return value == null ? '—' : `$${value}`;
}

const RECORD_STATE: Record<CatalogEntry['status'], { tone: 'neutral' | 'success' | 'warning'; label: string }> = {
  list: { tone: 'neutral', label: 'no record' },
  imported: { tone: 'success', label: 'list price' },
  custom: { tone: 'warning', label: 'own price' },
};

/** The bundled catalog of one provider at its list prices, and the bulk import of those prices into model records. */
function CatalogCard({ writable }: { writable: boolean }) {
  const [provider, setProvider] = useState('openai');
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [notice, setNotice] = useState('');
  const catalog = useOperatorGet<CatalogList>('admin/catalog/models', { provider, q: search });
  const action = useOperatorAction<CatalogImport>();
  const shown = catalog.data?.data ?? [];
  const choose = (next: ReadonlySet<string>) => {
    setSelected(next);
    setNotice('');
  };
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    choose(next);
  };
  const importPrices = (models: string[] | null) => {
    action.mutate({ method: 'POST', path: 'admin/catalog/import', body: { provider, ...(models === null ? {} : { models }) } }, {
      onSuccess: (answer) => {
        setSelected(new Set());
        setNotice(`List prices imported for ${answer.imported.length} model${answer.imported.length === 1 ? '' : 's'}.`);
      },
    });
  };
  const allShownSelected = shown.length > 0 && shown.every((entry) => selected.has(entry.id));
  return (
    <Card title="Bundled catalog">
      <p className="field-hint">List prices per million tokens from the bundled price data{catalog.data?.bundled_version == null ? '' : ` (@pydantic/genai-prices ${catalog.data.bundled_version})`}. A model without a record is billed at its list price; importing stores the list price as the gateway's own record, which a package upgrade no longer changes.</p>
      <div className="filter-bar">
        <SelectField label="Provider" value={provider} onChange={(event) => { setProvider(event.target.value); choose(new Set()); }}
          options={(catalog.data?.providers ?? [provider]).map((value) => ({ value, label: value }))} />
        <TextField label="Search the catalog" type="search" value={search} onChange={(event) => setSearch(event.target.value)} />
      </div>
      {writable ? (
        <div className="form-actions">
          <Button onClick={() => importPrices([...selected])} disabled={selected.size === 0} busy={action.isPending}>Import list prices of {selected.size} selected</Button>
          <Button variant="primary" onClick={() => importPrices(null)} busy={action.isPending}>Import all of {provider}</Button>
        </div>
      ) : null}
      {notice === '' ? null : <Alert tone="success">{notice}</Alert>}
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      {catalog.isPending ? <Loading /> : null}
      {catalog.isError ? <Alert tone="error">{errorMessage(catalog.error)}</Alert> : null}
      {catalog.data !== undefined && shown.length === 0 ? <p className="empty">No bundled model of {provider} matches.</p> : null}
      {shown.length === 0 ? null : (
        <div className="table-scroll"><table className="table table-cards" data-testid="catalog-table"><caption className="visually-hidden">Bundled catalog of {provider}</caption>
          <thead><tr>
            {writable ? <th scope="col"><input type="checkbox" aria-label="Select every model shown" checked={allShownSelected} onChange={() => choose(allShownSelected ? new Set() : new Set(shown.map((entry) => entry.id)))} /></th> : null}
            <th scope="col">Model</th><th scope="col" className="numeric">Input / M</th><th scope="col" className="numeric">Output / M</th><th scope="col" className="numeric">Cached input / M</th><th scope="col">Gateway record</th>
          </tr></thead>
          <tbody>{shown.map((entry) => (
            <tr key={entry.id} data-catalog-id={entry.id}>
              {writable ? <td data-label="Select"><input type="checkbox" aria-label={`Select ${entry.id}`} checked={selected.has(entry.id)} onChange={() => toggle(entry.id)} /></td> : null}
              <th scope="row" className="mono wrap-anywhere">{entry.id}<span className="key-meta">{entry.kind}</span></th>
              <td data-label="Input / M" className="numeric">{price(entry.list_pricing.input_per_mtok)}</td>
              <td data-label="Output / M" className="numeric">{price(entry.list_pricing.output_per_mtok)}</td>
              <td data-label="Cached input / M" className="numeric">{price(entry.list_pricing.cached_input_per_mtok)}</td>
              <td data-label="Gateway record"><Badge tone={RECORD_STATE[entry.status].tone}>{RECORD_STATE[entry.status].label}</Badge></td>
            </tr>
          ))}</tbody></table></div>
      )}
    </Card>
  );
}

/** The gateway's model records with prices per unit and the channels that serve each; the bundled catalog beside them. */
export function OperatorModelsPage() {
  useDocumentTitle('Models and prices');
  const me = useOperatorMe();
  const writable = canWrite(me.data);
  const models = useOperatorGet<AdminListPage<Model>>('admin/models', { limit: '200' });
  const channels = useOperatorGet<AdminListPage<Channel>>('admin/channels', { limit: '200' });
  const action = useOperatorAction();
  const removal = useOperatorAction();
  const [editing, setEditing] = useState<Model | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Model | null>(null);
  const servedBy = (id: string): string[] => (channels.data?.data ?? []).filter((channel) => id in channel.models || '*' in channel.models).map((channel) => channel.name);
  return (
    <div className="page stack">
      <PageHeader title="Models and prices" description="Prices per million tokens as billed; which channels serve each model."
        actions={writable ? <Button variant="primary" onClick={() => setEditing('new')}>Add model</Button> : undefined} />
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <Card title="Gateway models">
        {models.data?.data.length === 0 ? <p className="empty">No model records yet: add one, or import list prices from the bundled catalog below.</p> : null}
        {models.isPending ? <Loading /> : null}
        {models.isError ? <Alert tone="error">{errorMessage(models.error)}</Alert> : null}
        {models.data === undefined || models.data.data.length === 0 ? null : (
          <div className="table-scroll"><table className="table table-cards" data-testid="gateway-models-table"><caption className="visually-hidden">Models</caption>
            <thead><tr><th scope="col">Model</th><th scope="col">Visibility</th><th scope="col" className="numeric">Input / M</th><th scope="col" className="numeric">Output / M</th><th scope="col" className="numeric">Cached input / M</th><th scope="col">Channels</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>{models.data.data.map((model) => (
              <tr key={model.id} data-model-id={model.id}>
                <th scope="row" className="mono wrap-anywhere">{model.id}<span className="key-meta">{model.kind}{model.upstream === null ? '' : ` → ${model.upstream}`}</span>{routingSummary(model) === '' ? null : <span className="key-meta model-routing">{routingSummary(model)}</span>}</th>
                <td data-label="Visibility"><Badge tone={model.public ? 'info' : 'neutral'}>{model.public ? 'public' : 'private'}</Badge></td>
                <td data-label="Input / M" className="numeric">{price(model.pricing.input_per_mtok)}</td>
                <td data-label="Output / M" className="numeric">{price(model.pricing.output_per_mtok)}</td>
                <td data-label="Cached input / M" className="numeric">{price(model.pricing.cached_input_per_mtok)}</td>
                <td data-label="Channels">{servedBy(model.id).join(', ') || <span className="field-hint">none</span>}</td>
                <td className="cell-actions">{writable ? (
                  <>
                    <Button variant="ghost" onClick={() => setEditing(model)} aria-label={`Edit ${model.id}`}>Edit</Button>
                    <Button variant="ghost" onClick={() => action.mutate({ method: 'PATCH', path: `admin/models/${encodeURIComponent(model.id)}`, body: { public: !model.public } })}>{model.public ? 'Make private' : 'Make public'}</Button>
                    <Button variant="ghost" onClick={() => { removal.reset(); setDeleting(model); }} aria-label={`Delete ${model.id}`}>Delete</Button>
                  </>
                ) : null}</td>
              </tr>
            ))}</tbody></table></div>
        )}
      </Card>
      <CatalogCard writable={writable} />
      <Dialog open={editing !== null} title={editing === 'new' ? 'Add a model' : 'Edit model'} onClose={() => setEditing(null)}>
        {editing === null ? null : <ModelForm key={editing === 'new' ? 'new' : editing.id} model={editing === 'new' ? null : editing} onDone={() => setEditing(null)} />}
      </Dialog>
      <Dialog open={deleting !== null} title="Delete model" onClose={() => setDeleting(null)}>
        {deleting === null ? null : (
          <div className="stack">
            <p>Delete the record of <strong className="mono">{deleting.id}</strong>? {servedBy(deleting.id).length === 0 ? 'No channel serves it.' : `Channels ${servedBy(deleting.id).join(', ')} serve it: a model of the bundled catalog goes back to its list price, any other stops answering.`}</p>
            {removal.isError ? <Alert tone="error">{errorMessage(removal.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={() => setDeleting(null)}>Cancel</Button>
              <Button variant="danger" busy={removal.isPending} onClick={() => removal.mutate({ method: 'DELETE', path: `admin/models/${encodeURIComponent(deleting.id)}` }, { onSuccess: () => setDeleting(null) })}>Delete {deleting.id}</Button>
            </div>
          </div>
        )}
      </Dialog>
    </div>
  );
}
