import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import { Button } from '../../ui/button';
import { SelectField, TextField } from '../../ui/field';
import { Alert, Loading } from '../../ui/feedback';
import type { AdminModel, FlatPrice, GuardrailPolicy } from '../../api/operator-types';
import { GuardrailPicker } from '../keys/guardrail-picker';
import { useOperatorAction, useOperatorGet } from './operator-queries';
import type { GuardrailPolicyListJson } from '../../../../src/contract/index.js';

export type Model = AdminModel;

/** The prices an operator sets here (USD; per-token ones per million tokens), as the admin API names them. */
const PRICES: readonly { name: FlatPrice; label: string }[] = [
  { name: 'input_per_mtok', label: 'Input, USD per million tokens' },
  { name: 'output_per_mtok', label: 'Output, USD per million tokens' },
  { name: 'cached_input_per_mtok', label: 'Cache reads, USD per million tokens' },
  { name: 'cache_write_per_mtok', label: 'Cache writes, USD per million tokens' },
  { name: 'batch_input_per_mtok', label: 'Batch input, USD per million tokens (empty: the list batch price, else the input price)' },
  { name: 'batch_output_per_mtok', label: 'Batch output, USD per million tokens (empty: the list batch price, else the output price)' },
  { name: 'input_audio_per_mtok', label: 'Audio input, USD per million tokens (empty: the input price)' },
  { name: 'cached_input_audio_per_mtok', label: 'Cached audio input, USD per million tokens (empty: the audio input price)' },
  { name: 'output_audio_per_mtok', label: 'Audio output, USD per million tokens (empty: the output price)' },
  { name: 'per_request', label: 'Per request, USD' },
  { name: 'per_image', label: 'Per image, USD' },
  { name: 'per_audio_minute', label: 'Per audio minute, USD' },
  { name: 'per_mchar', label: 'Per million characters, USD' },
  { name: 'per_search_unit', label: 'Per search unit (rerank), USD' },
];

const KINDS = ['chat', 'embedding', 'image', 'audio', 'moderation', 'rerank'];
const STRATEGIES = [
  { value: 'weighted', label: 'Weighted' },
  { value: 'least-latency', label: 'Least latency' },
  { value: 'least-in-flight', label: 'Least in flight' },
];

function text(value: number | null | undefined): string {
  return value == null ? '' : String(value);
}

interface FormState {
  id: string;
  kind: string;
  public: boolean;
  upstream: string;
  prices: Record<string, string>;
  rpm: string;
  tpm: string;
  strategy: string;
  fallbacks: string;
  cacheOn: boolean;
  ttl: string;
  hitPrice: string;
  shared: boolean;
  guardrails: string[];
}

function stateOf(model: Model | null): FormState {
  return {
    id: model?.id ?? '',
    kind: model?.kind ?? 'chat',
    public: model?.public ?? true,
    upstream: model?.upstream ?? '',
    prices: Object.fromEntries(PRICES.map(({ name }) => [name, text(model?.pricing[name])])),
    rpm: text(model?.limits?.rpm),
    tpm: text(model?.limits?.tpm),
    strategy: model?.routing?.strategy ?? 'weighted',
    fallbacks: (model?.fallbacks ?? []).join(', '),
    cacheOn: model?.cache != null,
    ttl: text(model?.cache?.ttl_seconds),
    hitPrice: text(model?.cache?.hit_price ?? 0),
    shared: model?.cache?.shared ?? false,
    guardrails: [...(model?.guardrails ?? [])],
  };
}

const limit = (value: string): number | null => (value.trim() === '' ? null : Number(value));
const idList = (value: string): string[] => value.split(',').map((id) => id.trim()).filter((id) => id !== '');

/**
 * Creates a model, or changes one: a change sends only the fields changed here (one price changed sends that price;
 * the others, the cache and the fallbacks stay as stored). Everything the admin API takes for a model is here.
 */
export function ModelForm({ model, onDone }: { model: Model | null; onDone: () => void }) {
  // The list leaves out the bound guardrails: the single read says them, and the form starts from it.
  const detail = useOperatorGet<Model>(`admin/models/${encodeURIComponent(model?.id ?? '')}`, undefined, { enabled: model !== null });
  const policies = useOperatorGet<GuardrailPolicyListJson>('admin/guardrails');
  if ((model !== null && detail.isPending) || policies.isPending) return <Loading />;
  const failed = detail.error ?? policies.error;
  if (failed !== null) return <Alert tone="error">{errorMessage(failed)}</Alert>;
  return <ModelFields model={model === null ? null : { ...model, guardrails: detail.data?.guardrails ?? [] }} policies={policies.data?.data ?? []} onDone={onDone} />;
}

function ModelFields({ model, policies, onDone }: { model: Model | null; policies: GuardrailPolicy[]; onDone: () => void }) {
  const action = useOperatorAction();
  const initial = stateOf(model);
  const [form, setForm] = useState<FormState>(initial);
  const [notice, setNotice] = useState('');
  const update = (changes: Partial<FormState>) => setForm({ ...form, ...changes });

  const body = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const changedPrices = Object.fromEntries(PRICES.filter(({ name }) => model === null ? form.prices[name] !== '' : form.prices[name] !== initial.prices[name])
      .map(({ name }) => [name, (form.prices[name] ?? '').trim() === '' ? null : (form.prices[name] ?? '').trim()]));
    if (model === null) {
      out.id = form.id.trim();
      out.kind = form.kind;
      out.pricing = changedPrices;
    } else if (Object.keys(changedPrices).length > 0) out.pricing = changedPrices;
    if (model === null || form.public !== initial.public) out.public = form.public;
    if (form.upstream !== initial.upstream) out.upstream = form.upstream.trim() === '' ? null : form.upstream.trim();
    const limits: Record<string, number | null> = {};
    if (form.rpm !== initial.rpm) limits.rpm = limit(form.rpm);
    if (form.tpm !== initial.tpm) limits.tpm = limit(form.tpm);
    if (Object.keys(limits).length > 0) out.limits = limits;
    if (form.strategy !== initial.strategy) out.routing = { strategy: form.strategy };
    if (idList(form.fallbacks).join(',') !== idList(initial.fallbacks).join(',')) out.fallbacks = idList(form.fallbacks);
    const cacheChanged = form.cacheOn !== initial.cacheOn || (form.cacheOn && (form.ttl !== initial.ttl || form.hitPrice !== initial.hitPrice || form.shared !== initial.shared));
    if ([...form.guardrails].sort().join('\n') !== [...initial.guardrails].sort().join('\n')) out.guardrails = form.guardrails;
    if (cacheChanged) out.cache = form.cacheOn ? { ttl_seconds: Number(form.ttl), hit_price: Number(form.hitPrice === '' ? 0 : form.hitPrice), shared: form.shared } : null;
    return out;
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const changes = body();
    if (model !== null && Object.keys(changes).length === 0) {
      setNotice('Nothing changed.');
      return;
    }
    action.mutate({ method: model === null ? 'POST' : 'PATCH', path: model === null ? 'admin/models' : `admin/models/${encodeURIComponent(model.id)}`, body: changes }, { onSuccess: onDone });
  };

  return (
    <form className="stack" onSubmit={submit} aria-label={model === null ? 'New model' : `Model ${model.id}`}>
      <div className="form-grid">
        {model === null ? (
          <>
            <TextField label="Model id" value={form.id} onChange={(event) => update({ id: event.target.value })} required />
            <SelectField label="Kind" value={form.kind} onChange={(event) => update({ kind: event.target.value })} options={KINDS.map((kind) => ({ value: kind, label: kind }))} />
          </>
        ) : null}
        <TextField label="Upstream model" value={form.upstream} onChange={(event) => update({ upstream: event.target.value })} placeholder="Same id" hint="The name channels send, unless their mapping says otherwise." />
      </div>
      <fieldset className="stack plain-fieldset">
        <legend>Prices</legend>
        <p className="field-hint">Empty: unset (cache reads and writes then cost the input price; other units are not charged). Audio token prices bill realtime and live sessions. The next call is billed at the new price.</p>
        <div className="form-grid">
          {PRICES.map(({ name, label }) => (
            <TextField key={name} label={label} value={form.prices[name] ?? ''} inputMode="decimal" pattern="[0-9]*(\.[0-9]+)?"
              required={model === null && (name === 'input_per_mtok' || name === 'output_per_mtok') && form.kind === 'chat'}
              onChange={(event) => update({ prices: { ...form.prices, [name]: event.target.value } })} />
          ))}
        </div>
      </fieldset>
      <fieldset className="stack plain-fieldset">
        <legend>Routing and limits</legend>
        <div className="form-grid">
          <SelectField label="Balancing strategy" value={form.strategy} onChange={(event) => update({ strategy: event.target.value })} options={STRATEGIES} hint="Orders the channels of one priority: by weight, by time to first byte, or by requests in flight." />
          <TextField label="Fallback models" value={form.fallbacks} onChange={(event) => update({ fallbacks: event.target.value })} hint="Comma-separated ids, tried in order when this model cannot answer." />
          <TextField label="Requests per minute" type="number" min={1} value={form.rpm} onChange={(event) => update({ rpm: event.target.value })} placeholder="Unlimited" />
          <TextField label="Tokens per minute" type="number" min={1} value={form.tpm} onChange={(event) => update({ tpm: event.target.value })} placeholder="Unlimited" />
        </div>
      </fieldset>
      <fieldset className="stack plain-fieldset">
        <legend>Response cache</legend>
        <label className="checkbox-row"><input type="checkbox" checked={form.cacheOn} onChange={(event) => update({ cacheOn: event.target.checked, ttl: form.ttl === '' ? '300' : form.ttl })} /> Cache identical answers</label>
        {form.cacheOn ? (
          <div className="form-grid">
            <TextField label="Cache lifetime (seconds)" type="number" min={1} max={604800} value={form.ttl} onChange={(event) => update({ ttl: event.target.value })} required />
            <TextField label="Hit price (share of the answer's cost)" type="number" min={0} max={1} step="0.0001" value={form.hitPrice} onChange={(event) => update({ hitPrice: event.target.value })} hint="0 bills a hit nothing; 1 as much as the answer." />
            <label className="checkbox-row"><input type="checkbox" checked={form.shared} onChange={(event) => update({ shared: event.target.checked })} /> Share hits across accounts</label>
          </div>
        ) : null}
      </fieldset>
      <GuardrailPicker offered={policies} initial={initial.guardrails} chosen={form.guardrails} onChange={(guardrails) => update({ guardrails })}
        hint="The operator's defaults for this model: each runs on every request to it, from every account, beside the account's, project's and key's." />
      <label className="checkbox-row"><input type="checkbox" checked={form.public} onChange={(event) => update({ public: event.target.checked })} /> Public (listed in /v1/models)</label>
      {notice === '' ? null : <Alert tone="info">{notice}</Alert>}
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions"><Button onClick={onDone}>Cancel</Button><Button variant="primary" type="submit" busy={action.isPending}>{model === null ? 'Create model' : 'Save model'}</Button></div>
    </form>
  );
}
