import type { ReactNode } from 'react';
import { Button } from '../../ui/button';
import { FieldFrame, SelectField, TextField } from '../../ui/field';
import { PII_DETECTORS, type GuardrailKind, type HeaderRow, type SettingsDraft, type SettingsErrors } from './guardrail-settings';

interface SettingsFieldsProps {
  kind: GuardrailKind;
  mode: string;
  draft: SettingsDraft;
  errors: SettingsErrors;
  /** The webhook's sealed headers, by name (their values are never shown). */
  headerNames: readonly string[];
  onChange: <Field extends keyof SettingsDraft>(field: Field, value: SettingsDraft[Field]) => void;
}

/** A list typed one item per line, with its error. */
function LinesField({ label, hint, error, value, rows = 3, onChange }: { label: string; hint: ReactNode; error: string | undefined; value: string; rows?: number; onChange: (value: string) => void }) {
  return (
    <FieldFrame label={label} hint={hint} error={error}>
      {({ inputId, describedBy }) => (
        <textarea id={inputId} aria-describedby={describedBy} aria-invalid={error === undefined ? undefined : true} rows={rows} spellCheck={false} autoComplete="off" className="mono"
          value={value} onChange={(event) => onChange(event.target.value)} />
      )}
    </FieldFrame>
  );
}

function Checkbox({ id, checked, onChange, children }: { id: string; checked: boolean; onChange: (checked: boolean) => void; children: ReactNode }) {
  return (
    <div className="checkbox-row">
      <input id={id} type="checkbox" checked={checked} onChange={(event) => onChange(event.target.checked)} />
      <label htmlFor={id}>{children}</label>
    </div>
  );
}

function FailureChoice({ draft, onChange, what }: Pick<SettingsFieldsProps, 'draft' | 'onChange'> & { what: string }) {
  return (
    <SelectField label={`When ${what} fails or times out`} value={draft.failOpen ? 'open' : 'closed'} onChange={(event) => onChange('failOpen', event.target.value === 'open')}
      options={[{ value: 'closed', label: 'Refuse (fail closed)' }, { value: 'open', label: 'Pass (fail open)' }]} />
  );
}

function PiiFields({ mode, draft, errors, onChange }: SettingsFieldsProps) {
  const toggle = (value: string, checked: boolean) => onChange('detectors', checked ? [...draft.detectors, value] : draft.detectors.filter((chosen) => chosen !== value));
  return (
    <>
      <fieldset>
        <legend>Detectors</legend>
        <div className="model-picker" role="group" aria-label="Detectors">
          {PII_DETECTORS.map((detector) => (
            <label key={detector.value} className="checkbox-row">
              <input type="checkbox" checked={draft.detectors.includes(detector.value)} onChange={(event) => toggle(detector.value, event.target.checked)} />
              <span>{detector.label}</span>
            </label>
          ))}
        </div>
        <p className="field-hint">All chosen: every detector, including ones a later version adds.</p>
        {errors.detectors === undefined ? null : <p className="field-error" role="alert">{errors.detectors}</p>}
      </fieldset>
      <Checkbox id="guardrail-reversible" checked={draft.reversible} onChange={(checked) => onChange('reversible', checked)}>
        Reversible masking: numbered placeholders go upstream and the originals are put back in the answer{mode === 'mask' ? '' : ' (in mask mode)'}
      </Checkbox>
      {errors.reversible === undefined ? null : <p className="field-error" role="alert">{errors.reversible}</p>}
    </>
  );
}

function DenyListFields({ draft, errors, onChange }: SettingsFieldsProps) {
  return (
    <>
      <div className="form-grid">
        <LinesField label="Words" hint="One word or phrase per line; matched whole, ignoring case." error={errors.words} value={draft.words} rows={4} onChange={(value) => onChange('words', value)} />
        <LinesField label="Regular expressions" hint="One per line, matched ignoring case. Back-references and nested unbounded repeats are refused (they could run for ever)." error={errors.patterns} value={draft.patterns} rows={4} onChange={(value) => onChange('patterns', value)} />
        <TextField label="Longest pattern match (characters)" type="number" inputMode="numeric" min={1} max={1000} step={1} value={draft.maxMatchChars} onChange={(event) => onChange('maxMatchChars', event.target.value)} error={errors.maxMatchChars}
          hint="Bounds what a pattern may span in a stream. Empty: the default." />
        <TextField label="Longest prompt (characters)" type="number" inputMode="numeric" min={1} step={1} value={draft.maxPromptChars} onChange={(event) => onChange('maxPromptChars', event.target.value)} error={errors.maxPromptChars}
          hint="Longer prompts are refused (or logged). Empty: no limit." />
        <TextField label="Longest tool name (characters)" type="number" inputMode="numeric" min={1} max={256} step={1} value={draft.maxToolNameChars} onChange={(event) => onChange('maxToolNameChars', event.target.value)} error={errors.maxToolNameChars} />
        <LinesField label="Refused tool names" hint="One per line." error={errors.deniedTools} value={draft.deniedTools} onChange={(value) => onChange('deniedTools', value)} />
      </div>
      <Checkbox id="guardrail-injection" checked={draft.toolResultInjection} onChange={(checked) => onChange('toolResultInjection', checked)}>
        Score tool results for prompt injection (blocked or logged by the mode)
      </Checkbox>
      {draft.toolResultInjection ? (
        <TextField label="Injection score that counts" type="number" inputMode="numeric" min={1} max={20} step={1} value={draft.injectionThreshold} onChange={(event) => onChange('injectionThreshold', event.target.value)} error={errors.injectionThreshold}
          hint="1 to 20; lower catches more. Empty: the default." />
      ) : null}
    </>
  );
}

function ModerationFields({ draft, errors, onChange }: SettingsFieldsProps) {
  return (
    <div className="form-grid">
      <TextField label="Moderation model" value={draft.model} onChange={(event) => onChange('model', event.target.value)} error={errors.model} placeholder="omni-moderation-latest"
        hint="A model of this catalog that answers /v1/moderations, called through the gateway's routing." />
      <TextField label="Categories" value={draft.categories} onChange={(event) => onChange('categories', event.target.value)} error={errors.categories} placeholder="violence, self-harm/intent"
        hint="OpenAI's category names, comma-separated. Empty: every category." />
      <TextField label="Score threshold" type="number" inputMode="decimal" min={0} max={1} step="0.01" value={draft.threshold} onChange={(event) => onChange('threshold', event.target.value)} error={errors.threshold}
        hint="A category counts at this score (0 to 1). Empty: when the model flags it." />
      <SelectField label="Billed to" value={draft.billedTo} onChange={(event) => onChange('billedTo', event.target.value === 'operator' ? 'operator' : 'account')}
        options={[{ value: 'account', label: 'The request\'s account' }, { value: 'operator', label: 'The operator' }]}
        hint={draft.billedTo === 'account' ? 'Charged to the key and account of the request it checks.' : 'Made and billed as one of the operator\'s keys.'} />
      {draft.billedTo === 'operator' ? (
        <TextField label="Operator key id" value={draft.operatorKeyId} onChange={(event) => onChange('operatorKeyId', event.target.value)} error={errors.operatorKeyId} placeholder="key_…" className="mono"
          hint="The key the moderation calls are made and billed as." />
      ) : null}
      <TextField label="Timeout (ms)" type="number" inputMode="numeric" min={1} max={30000} step={1} value={draft.timeoutMs} onChange={(event) => onChange('timeoutMs', event.target.value)} error={errors.timeoutMs} placeholder="3000" />
      <FailureChoice draft={draft} onChange={onChange} what="the moderation call" />
    </div>
  );
}

function HeaderRows({ rows, onChange }: { rows: HeaderRow[]; onChange: (rows: HeaderRow[]) => void }) {
  const change = (index: number, row: Partial<HeaderRow>) => onChange(rows.map((existing, at) => (at === index ? { ...existing, ...row } : existing)));
  return (
    <div className="stack" role="group" aria-label="Headers">
      {rows.map((row, index) => (
        // Rows have no identity beyond their place (every input is controlled, so a removal re-renders the rest).
        <div key={index} className="inline-form inline-form-compact">
          <TextField label={`Header ${index + 1} name`} value={row.name} onChange={(event) => change(index, { name: event.target.value })} placeholder="Authorization" autoComplete="off" className="mono" />
          <TextField label={`Header ${index + 1} value`} type="password" value={row.value} onChange={(event) => change(index, { value: event.target.value })} autoComplete="new-password" />
          <Button variant="ghost" onClick={() => onChange(rows.filter((_, at) => at !== index))}>Remove<span className="visually-hidden"> header {index + 1}</span></Button>
        </div>
      ))}
      <div><Button variant="ghost" onClick={() => onChange([...rows, { name: '', value: '' }])}>Add header</Button></div>
    </div>
  );
}

function WebhookFields({ draft, errors, headerNames, onChange }: SettingsFieldsProps) {
  return (
    <>
      <div className="form-grid">
        <TextField label="Guardrail URL" type="url" value={draft.url} onChange={(event) => onChange('url', event.target.value)} error={errors.url} placeholder="https://guardrail.example.com/check" required
          hint="http(s), without user name, password or fragment: credentials go in the headers." />
        <TextField label="Timeout (ms)" type="number" inputMode="numeric" min={1} max={30000} step={1} value={draft.timeoutMs} onChange={(event) => onChange('timeoutMs', event.target.value)} error={errors.timeoutMs} placeholder="3000" />
        <FailureChoice draft={draft} onChange={onChange} what="the guardrail" />
      </div>
      <fieldset>
        <legend>Headers</legend>
        <p className="field-hint">Sent with every check (an API key, for example). Sealed at rest and never shown again, only their names.</p>
        {headerNames.length === 0 ? null : (
          <SelectField label="Headers it sends" value={draft.headersAction} onChange={(event) => onChange('headersAction', event.target.value as SettingsDraft['headersAction'])}
            hint={<>Now: <span className="mono">{headerNames.join(', ')}</span></>}
            options={[{ value: 'keep', label: 'Keep them as they are' }, { value: 'replace', label: 'Replace them with the ones below' }, { value: 'remove', label: 'Remove them' }]} />
        )}
        {draft.headersAction === 'replace' ? <HeaderRows rows={draft.headers} onChange={(rows) => onChange('headers', rows)} /> : null}
        {errors.headers === undefined ? null : <p className="field-error" role="alert">{errors.headers}</p>}
      </fieldset>
    </>
  );
}

/** The settings of the policy's kind, as fields. */
export function GuardrailSettingsFields(props: SettingsFieldsProps) {
  if (props.kind === 'pii') return <PiiFields {...props} />;
  if (props.kind === 'deny_list') return <DenyListFields {...props} />;
  if (props.kind === 'moderation') return <ModerationFields {...props} />;
  return <WebhookFields {...props} />;
}
