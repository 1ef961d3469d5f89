import { useState, type FormEvent } from 'react';
import { ApiError, errorMessage } from '../../api/client';
import type { GuardrailPolicy } from '../../api/operator-types';
import { formatDateTime } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { SelectField, TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';
import { GuardrailBoundTo } from './guardrail-bound-to';
import { GuardrailSettingsFields } from './guardrail-settings-fields';
import { settingsDraftOf, settingsErrorOf, settingsOf, type SettingsDraft, type SettingsErrors } from './guardrail-settings';
import type { GuardrailPolicyListJson } from '../../../../src/contract/index.js';

type Kind = GuardrailPolicy['kind'];

const KINDS: { value: Kind; label: string }[] = [
  { value: 'pii', label: 'Personal data' },
  { value: 'deny_list', label: 'Deny list and limits' },
  { value: 'moderation', label: 'Moderation model' },
  { value: 'webhook', label: 'External guardrail' },
];
const KIND_HINTS: Record<Kind, string> = {
  pii: 'Emails, phone numbers, cards, IBANs, national ids, IP addresses, secrets.',
  deny_list: 'Words, patterns, prompt size, tool names, injection in tool results.',
  moderation: 'A moderation model of this catalog, called through the gateway.',
  webhook: 'A guardrail service over HTTP (Portkey\'s and LiteLLM\'s shape).',
};
const MODES = [
  { value: 'block', label: 'Block' },
  { value: 'mask', label: 'Mask' },
  { value: 'log', label: 'Log only' },
];
const DIRECTIONS = [
  { value: 'input', label: 'Prompts (input)' },
  { value: 'output', label: 'Answers (output)' },
  { value: 'both', label: 'Both' },
];

interface Draft { name: string; kind: Kind; mode: string; appliesTo: string; accountsMayUse: boolean; accountsMayOverride: GuardrailPolicy['accounts_may_override'] }

const OVERRIDE_RULES = [
  { value: 'none', label: 'No: it runs as set' },
  { value: 'relax', label: 'They may relax its mode' },
  { value: 'disable', label: 'They may relax it or turn it off' },
];

function draftOf(policy: GuardrailPolicy | null): Draft {
  return {
    name: policy?.name ?? '',
    kind: policy?.kind ?? 'pii',
    mode: policy?.mode ?? 'mask',
    appliesTo: policy?.applies_to ?? 'input',
    accountsMayUse: policy?.accounts_may_use ?? false,
    accountsMayOverride: policy?.accounts_may_override ?? 'none',
  };
}

/** The kind's settings as the policy has them (its own kind), or the kind's starting point. */
function settingsDraftFor(policy: GuardrailPolicy | null, kind: Kind): SettingsDraft {
  return policy !== null && policy.kind === kind ? settingsDraftOf(kind, policy.settings, policy.header_names ?? []) : settingsDraftOf(kind, null);
}

function PolicyForm({ policy, onDone }: { policy: GuardrailPolicy | null; onDone: (message: string) => void }) {
  const action = useOperatorAction<GuardrailPolicy>();
  const [draft, setDraft] = useState<Draft>(() => draftOf(policy));
  const [settings, setSettings] = useState<SettingsDraft>(() => settingsDraftFor(policy, policy?.kind ?? 'pii'));
  const [errors, setErrors] = useState<SettingsErrors>({});
  const set = <Field extends keyof Draft>(field: Field, value: Draft[Field]) => setDraft((current) => ({ ...current, [field]: value }));
  const setSetting = <Field extends keyof SettingsDraft>(field: Field, value: SettingsDraft[Field]) => {
    setErrors((current) => ({ ...current, [field]: undefined }));
    setSettings((current) => ({ ...current, [field]: value }));
  };
  const verdictOnly = draft.kind === 'webhook' || draft.kind === 'moderation';
  const chooseKind = (kind: Kind) => {
    setDraft((current) => ({
      ...current, kind,
      // A moderation model or a webhook answers a verdict: it blocks or logs, never masks.
      mode: (kind === 'webhook' || kind === 'moderation') && current.mode === 'mask' ? 'block' : current.mode,
    }));
    setSettings(settingsDraftFor(policy, kind));
    setErrors({});
  };
  // The server decides: an error naming one setting is shown at its field as well.
  const serverError = action.error instanceof ApiError ? settingsErrorOf(action.error.param, action.error.message) : null;
  const shownErrors: SettingsErrors = serverError === null || errors[serverError.field] !== undefined ? errors : { ...errors, [serverError.field]: serverError.message };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = settingsOf(draft.kind, settings);
    if ('errors' in parsed) {
      setErrors(parsed.errors);
      return;
    }
    setErrors({});
    const body = { name: draft.name.trim(), kind: draft.kind, mode: draft.mode, applies_to: draft.appliesTo, settings: parsed.settings, accounts_may_use: draft.accountsMayUse, accounts_may_override: draft.accountsMayOverride };
    action.mutate(policy === null ? { method: 'POST', path: 'admin/guardrails', body } : { method: 'PATCH', path: `admin/guardrails/${encodeURIComponent(policy.id)}`, body }, {
      onSuccess: (saved) => onDone(policy === null ? `Policy ${saved.name} created.` : `Policy ${saved.name} saved.`),
    });
  };
  const fieldProblem = Object.values(errors).find((problem) => problem !== undefined);
  return (
    <form className="stack" onSubmit={submit} noValidate aria-label="Guardrail policy">
      {action.isError && fieldProblem === undefined ? <Alert tone="error">{serverError === null ? errorMessage(action.error) : `Check the settings: ${serverError.message}`}</Alert> : null}
      {fieldProblem === undefined ? null : <Alert tone="error">Check the settings: {fieldProblem}</Alert>}
      <div className="form-grid">
        <TextField label="Name" value={draft.name} onChange={(event) => set('name', event.target.value)} required maxLength={100} autoFocus
          error={action.error instanceof ApiError && action.error.param === 'name' ? action.error.message : undefined}
          hint="Letters, digits, _ . - only. Models, accounts, projects and keys name the policy; a rename follows into them." />
        <SelectField label="Kind" value={draft.kind} onChange={(event) => chooseKind(event.target.value as Kind)} options={KINDS} hint={KIND_HINTS[draft.kind]} />
        <SelectField label="Mode" value={draft.mode} onChange={(event) => set('mode', event.target.value)} options={verdictOnly ? MODES.filter((mode) => mode.value !== 'mask') : MODES}
          hint={verdictOnly ? 'This kind answers a verdict: it blocks or logs.' : 'Block refuses the request or ends the answer; mask replaces what matched.'} />
        <SelectField label="Applies to" value={draft.appliesTo} onChange={(event) => set('appliesTo', event.target.value)} options={DIRECTIONS} />
      </div>
      <fieldset className="guardrail-settings">
        <legend>Settings</legend>
        <GuardrailSettingsFields kind={draft.kind} mode={draft.mode} draft={settings} errors={shownErrors} headerNames={policy?.kind === 'webhook' ? policy.header_names ?? [] : []} onChange={setSetting} />
      </fieldset>
      <div className="checkbox-row">
        <input id="accounts-may-use" type="checkbox" checked={draft.accountsMayUse} onChange={(event) => set('accountsMayUse', event.target.checked)} />
        <label htmlFor="accounts-may-use">Accounts may use it: owners and admins can attach it to their own keys and projects</label>
      </div>
      <SelectField label="Accounts may override it" value={draft.accountsMayOverride} onChange={(event) => set('accountsMayOverride', event.target.value as Draft['accountsMayOverride'])} options={OVERRIDE_RULES}
        hint="Where it applies to them, an account's owners and admins may make it milder (block → mask → log) or turn it off, for the account, a project or a key. Withdrawn, their overrides stop on the next request." />
      <div className="form-actions"><Button onClick={() => onDone('')}>Cancel</Button><Button variant="primary" type="submit" busy={action.isPending}>{policy === null ? 'Create policy' : 'Save policy'}</Button></div>
    </form>
  );
}

/** Which accounts changed the policy for themselves, and whether the policy still allows it. */
function OverriddenBy({ policy }: { policy: GuardrailPolicy }) {
  const overrides = policy.overrides ?? [];
  const rule = { none: 'Accounts may not change it', relax: 'Accounts may relax it', disable: 'Accounts may relax or turn it off' }[policy.accounts_may_override];
  return (
    <ul className="plain-list">
      <li className="key-meta">{rule}{overrides.length === 0 && policy.accounts_may_override !== 'none' ? '; none has' : ''}</li>
      {overrides.slice(0, 6).map((override) => (
        <li key={`${override.scope}:${override.id}`}>
          <span className="mono wrap-anywhere">{override.account_email ?? override.account_id}</span> <span className="key-meta">{override.scope === 'account' ? '' : `${override.scope} ${override.name ?? override.id} `}</span>
          <Badge tone={override.applied ? 'warning' : 'neutral'}>{override.mode}{override.applied ? '' : ' (not applied)'}</Badge>
        </li>
      ))}
      {overrides.length > 6 ? <li className="key-meta">and {overrides.length - 6} more</li> : null}
    </ul>
  );
}

function PolicyRow({ policy, writable, onEdit, onDelete }: { policy: GuardrailPolicy; writable: boolean; onEdit: () => void; onDelete: () => void }) {
  return (
    <tr data-guardrail={policy.name}>
      <th scope="row"><span className="mono wrap-anywhere">{policy.name}</span><span className="key-meta">Changed {formatDateTime(policy.updated_at)}</span></th>
      <td data-label="Kind">{KINDS.find((kind) => kind.value === policy.kind)?.label ?? policy.kind}</td>
      <td data-label="Mode"><Badge tone={policy.mode === 'block' ? 'danger' : policy.mode === 'mask' ? 'info' : 'neutral'}>{policy.mode}</Badge></td>
      <td data-label="Applies to">{policy.applies_to}</td>
      <td data-label="Accounts">{policy.accounts_may_use ? <Badge tone="success">may use</Badge> : <span className="key-meta">operator only</span>}</td>
      <td data-label="Bound to"><GuardrailBoundTo policy={policy} /></td>
      <td data-label="Overridden by"><OverriddenBy policy={policy} /></td>
      <td className="cell-actions">{writable ? (
        <>
          <Button variant="ghost" onClick={onEdit}>Edit<span className="visually-hidden"> {policy.name}</span></Button>
          <Button variant="danger" onClick={onDelete}>Delete<span className="visually-hidden"> {policy.name}</span></Button>
        </>
      ) : null}</td>
    </tr>
  );
}

function DeleteConfirm({ policy, onDone }: { policy: GuardrailPolicy; onDone: (message: string) => void }) {
  const action = useOperatorAction();
  return (
    <div className="stack">
      <p>The policy <strong className="mono">{policy.name}</strong> is removed. A policy still bound to a model, account, project or key cannot be deleted: remove it there first.</p>
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions">
        <Button onClick={() => onDone('')}>Cancel</Button>
        <Button variant="danger" busy={action.isPending} onClick={() => action.mutate({ method: 'DELETE', path: `admin/guardrails/${encodeURIComponent(policy.id)}` }, { onSuccess: () => onDone(`Policy ${policy.name} deleted.`) })}>Delete policy</Button>
      </div>
    </div>
  );
}

/** The operator's guardrail policies through the admin bridge: what each does, who may use it and where it is bound. */
export function OperatorGuardrailsPage() {
  useDocumentTitle('Guardrails');
  const me = useOperatorMe();
  const writable = canWrite(me.data);
  const policies = useOperatorGet<GuardrailPolicyListJson>('admin/guardrails');
  const [editing, setEditing] = useState<GuardrailPolicy | 'new' | null>(null);
  const [deleting, setDeleting] = useState<GuardrailPolicy | null>(null);
  const [notice, setNotice] = useState('');
  const done = (message: string) => {
    setEditing(null);
    setDeleting(null);
    setNotice(message);
  };
  return (
    <div className="page stack">
      <PageHeader title="Guardrails" description="Checks on prompts and answers in every API family, streamed or not. Bind a policy to a model in its form (the default for every account) or to an account on its page; accounts attach the ones they may use to their own keys and projects."
        actions={writable ? <Button variant="primary" onClick={() => { setNotice(''); setEditing('new'); }}>New policy</Button> : undefined} />
      {notice === '' ? null : <Alert tone="success">{notice}</Alert>}
      {writable ? null : <Alert tone="info">Your role reads policies; an admin or owner changes them.</Alert>}
      <Card>
        {policies.isPending ? <Loading /> : null}
        {policies.isError ? <Alert tone="error">{errorMessage(policies.error)}</Alert> : null}
        {policies.data?.data.length === 0 ? <p className="empty">No guardrail policies yet.</p> : null}
        {policies.data === undefined || policies.data.data.length === 0 ? null : (
          <div className="table-scroll"><table className="table table-cards" data-testid="guardrails-table"><caption className="visually-hidden">Guardrail policies</caption>
            <thead><tr><th scope="col">Policy</th><th scope="col">Kind</th><th scope="col">Mode</th><th scope="col">Applies to</th><th scope="col">Accounts</th><th scope="col">Bound to</th><th scope="col">Overridden by</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>{policies.data.data.map((policy) => (
              <PolicyRow key={policy.id} policy={policy} writable={writable} onEdit={() => { setNotice(''); setEditing(policy); }} onDelete={() => { setNotice(''); setDeleting(policy); }} />
            ))}</tbody></table></div>
        )}
      </Card>
      <Dialog open={editing !== null} title={editing === 'new' ? 'New guardrail policy' : 'Edit guardrail policy'} onClose={() => setEditing(null)}>
        {editing === null ? null : <PolicyForm policy={editing === 'new' ? null : editing} onDone={done} />}
      </Dialog>
      <Dialog open={deleting !== null} title="Delete guardrail policy" onClose={() => setDeleting(null)}>{deleting === null ? null : <DeleteConfirm policy={deleting} onDone={done} />}</Dialog>
    </div>
  );
}
