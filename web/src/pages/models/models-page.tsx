import { useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import { useSession } from '../../api/api-context';
import type { CatalogModel } from '../../api/types';
import { CurrencySelect, useDisplayCurrency, type DisplayCurrency } from '../../format/display-currency';
import { formatCompact } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { CopyButton } from '../../ui/copy-button';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';
import { useKeys, useModels } from '../keys/key-queries';

const CAPABILITIES = [['tools', 'Tools'], ['vision', 'Vision'], ['json_schema', 'JSON schema'], ['reasoning', 'Reasoning']] as const;
type Capability = (typeof CAPABILITIES)[number][0];

/** Which models to list: those any of the account's keys may call, one key's, or every model of the gateway. */
const ANY_KEY = 'any';
const EVERY_MODEL = 'all';

function price(display: DisplayCurrency, value: number | undefined | null): string {
  return value == null ? '—' : display.format(value, { precise: true });
}

function perCall(model: CatalogModel, display: DisplayCurrency): string | null {
  const { pricing } = model;
  const parts = [
    ['per_request', 'request'], ['per_image', 'image'], ['per_audio_minute', 'audio minute'], ['per_mchar', 'million characters'], ['per_web_search', 'web search'], ['per_search_unit', 'search unit'],
  ] as const;
  const named = parts.flatMap(([field, unit]) => {
    const value = pricing[field];
    return value === null ? [] : [`${display.format(value, { precise: true })} per ${unit}`];
  });
  return named.length === 0 ? null : named.join(' · ');
}

function ModelRow({ model, display, showKeys }: { model: CatalogModel; display: DisplayCurrency; showKeys: boolean }) {
  const { pricing } = model;
  const capabilities = model.capabilities;
  const calls = perCall(model, display);
  return (
    <tr data-testid="model-row" data-model={model.id}>
      <th scope="row" data-label="Model">
        <span className="model-id mono">{model.id}</span>
        <span className="key-meta">{model.kind} · {model.owned_by}{model.aliases.length > 0 ? ` · also ${model.aliases.join(', ')}` : ''}</span>
        {capabilities == null ? null : (
          <span className="badge-row" aria-label="Capabilities">
            {CAPABILITIES.filter(([name]) => capabilities[name]).map(([name, label]) => <Badge key={name} tone="info">{label}</Badge>)}
          </span>
        )}
      </th>
      <td data-label="Context" className="numeric">
        {model.context_window == null ? '—' : formatCompact(model.context_window)}
        {model.max_output_tokens == null ? null : <span className="key-meta">{formatCompact(model.max_output_tokens)} out</span>}
      </td>
      <td data-label="Input / 1M tokens" className="numeric">{price(display, pricing.input_per_mtok)}</td>
      <td data-label="Output / 1M tokens" className="numeric">{price(display, pricing.output_per_mtok)}</td>
      <td data-label="Cached input / 1M tokens" className="numeric">
        {price(display, pricing.cached_input_per_mtok)}
        {pricing.cache_write_per_mtok == null ? null : <span className="key-meta">write {price(display, pricing.cache_write_per_mtok)}</span>}
      </td>
      <td data-label="Per call">{calls ?? '—'}</td>
      {showKeys ? <td data-label="Your keys">{model.keys === undefined || model.keys.length === 0 ? <span className="key-meta">None yet</span> : model.keys.map((key) => key.name).join(', ')}</td> : null}
      <td className="cell-actions">
        <span className="row-actions">
          <CopyButton text={model.id} label="Copy id" />
          {model.kind === 'chat' ? <Link className="button button-secondary" to={`/playground?model=${encodeURIComponent(model.id)}`}>Try in playground</Link> : null}
        </span>
      </td>
    </tr>
  );
}

/** Every model the account may call, with its prices in the chosen currency, searchable and filterable. */
export function ModelsPage() {
  useDocumentTitle('Models');
  const session = useSession();
  const role = session.data?.role ?? null;
  const readsKeys = role !== 'billing';
  const models = useModels();
  const keys = useKeys(readsKeys);
  const display = useDisplayCurrency();
  const [search, setSearch] = useState('');
  const [kind, setKind] = useState('');
  const [capability, setCapability] = useState<Capability | ''>('');
  const [scope, setScope] = useState(ANY_KEY);

  const usableKeys = (keys.data?.data ?? []).filter((key) => key.status !== 'revoked' && key.status !== 'expired');
  const all = models.data?.data ?? [];
  const kinds = [...new Set(all.map((model) => model.kind))].sort();
  const shown = useMemo(() => {
    const text = search.trim().toLowerCase();
    return all.filter((model) => {
      if (readsKeys && scope === ANY_KEY && usableKeys.length > 0 && (model.keys ?? []).length === 0) return false;
      if (readsKeys && scope !== ANY_KEY && scope !== EVERY_MODEL && !(model.keys ?? []).some((key) => key.id === scope)) return false;
      if (kind !== '' && model.kind !== kind) return false;
      if (capability !== '' && model.capabilities?.[capability] !== true) return false;
      return text === '' || model.id.toLowerCase().includes(text) || model.owned_by.toLowerCase().includes(text) || (model.aliases ?? []).some((alias) => alias.toLowerCase().includes(text));
    });
  }, [all, search, kind, capability, scope, readsKeys, usableKeys.length]);

  return (
    <div className="page stack">
      <PageHeader title="Models" description="The models you can call, with what each costs. Copy an id into your code, or try a chat model in the playground." />
      <Card>
        <div className="filters">
          <TextField label="Search" type="search" value={search} onChange={(event) => setSearch(event.target.value)} placeholder="Model id or provider" />
          <SelectField label="Kind" value={kind} onChange={(event) => setKind(event.target.value)} options={[{ value: '', label: 'Every kind' }, ...kinds.map((value) => ({ value, label: value }))]} />
          <SelectField
            label="Can"
            value={capability}
            onChange={(event) => setCapability(event.target.value as Capability | '')}
            options={[{ value: '', label: 'Anything' }, ...CAPABILITIES.map(([value, label]) => ({ value, label }))]}
          />
          {readsKeys ? (
            <SelectField
              label="Callable with"
              value={scope}
              onChange={(event) => setScope(event.target.value)}
              options={[
                { value: ANY_KEY, label: 'Any of my keys' },
                ...usableKeys.map((key) => ({ value: key.id, label: `Key “${key.name}” (${key.hint})` })),
                { value: EVERY_MODEL, label: 'Every model (for a new key)' },
              ]}
            />
          ) : null}
          <CurrencySelect display={display} />
        </div>
        {readsKeys && scope === ANY_KEY && keys.data !== undefined && usableKeys.length === 0 ? (
          <Alert tone="info">You have no API key yet: these are every model a new key may call. <Link to="/keys">Create a key</Link>.</Alert>
        ) : null}
        {models.isPending ? <Loading /> : null}
        {models.error != null ? <Alert tone="error">The models could not be loaded.</Alert> : null}
        {models.data !== undefined && shown.length === 0 ? <p className="empty">No model matches.</p> : null}
        {shown.length === 0 ? null : (
          <div className="table-scroll">
            <table className="table table-cards models-table" data-testid="models-table">
              <caption className="visually-hidden">Models and their prices{display.approximate ? `, approximately in ${display.currency}` : ''}</caption>
              <thead>
                <tr>
                  <th scope="col">Model</th><th scope="col" className="numeric">Context</th>
                  <th scope="col" className="numeric">Input / 1M</th><th scope="col" className="numeric">Output / 1M</th><th scope="col" className="numeric">Cached / 1M</th>
                  <th scope="col">Per call</th>{readsKeys ? <th scope="col">Your keys</th> : null}<th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>{shown.map((model) => <ModelRow key={model.id} model={model} display={display} showKeys={readsKeys} />)}</tbody>
            </table>
          </div>
        )}
        <p className="key-meta">{shown.length} of {all.length} models. Prices are per million tokens unless stated; {display.approximate ? `amounts in ${display.currency} are approximate, you are billed in USD.` : 'you are billed in USD.'}</p>
      </Card>
    </div>
  );
}
