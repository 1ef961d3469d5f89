import { useState, type FormEvent } from 'react';
import { useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { SelectField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { useKeys } from '../keys/key-queries';
import { useProjects } from '../projects/project-queries';
import { useAccountGuardrails, useSetOverride, type AccountGuardrail, type OverrideMode } from './guardrail-override-queries';

const KIND_LABEL: Record<string, string> = { pii: 'Personal data', deny_list: 'Deny list and limits', moderation: 'Moderation model', webhook: 'External guardrail' };
const MODE_LABEL: Record<string, string> = { off: 'Off', log: 'Log only', mask: 'Mask', block: 'Block' };
const ALLOWANCE: Record<string, string> = { none: 'Runs as the operator set it', relax: 'You may relax it', disable: 'You may relax it or turn it off' };

/** Owners and admins change overrides (the console API's guardrails:manage); the others read them. */
function canManage(role: string | null | undefined): boolean {
  return role === 'owner' || role === 'admin';
}

function modeOptions(policy: AccountGuardrail): { value: string; label: string }[] {
  return [{ value: '', label: `As set (${(MODE_LABEL[policy.mode] ?? policy.mode).toLowerCase()})` }, ...policy.allowed_modes.map((mode) => ({ value: mode, label: MODE_LABEL[mode] ?? mode }))];
}

function AppliesOn({ policy, names }: { policy: AccountGuardrail; names: (scope: 'project' | 'key', id: string) => string }) {
  const where = [
    ...(policy.applies_on.models ? ['some models'] : []),
    ...(policy.applies_on.account ? ['this account'] : []),
    ...policy.applies_on.projects.map((id) => `project ${names('project', id)}`),
    ...policy.applies_on.keys.map((id) => `key ${names('key', id)}`),
  ];
  return <span>{where.length === 0 ? 'No longer applies' : where.join(', ')}</span>;
}

/** The account-wide setting of one policy: a select among the modes the operator allows. */
function AccountSetting({ policy, accountId, writable }: { policy: AccountGuardrail; accountId: string; writable: boolean }) {
  const set = useSetOverride();
  const current = policy.overrides.find((override) => override.scope === 'account' && override.id === accountId);
  if (policy.allowed_modes.length === 0 && current === undefined) return <span className="key-meta">Fixed by the operator</span>;
  const options = current !== undefined && !policy.allowed_modes.includes(current.mode) ? [...modeOptions(policy), { value: current.mode, label: `${MODE_LABEL[current.mode]} (no longer allowed)` }] : modeOptions(policy);
  return (
    <div className="stack">
      <select className="select-fit" aria-label={`For the whole account: ${policy.name}`} value={current?.mode ?? ''} disabled={!writable || set.isPending}
        onChange={(event) => set.mutate({ name: policy.name, scope: 'account', mode: event.target.value === '' ? null : event.target.value as OverrideMode })}>
        {options.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
      </select>
      {current !== undefined && !current.applied ? <Badge tone="warning">Not applied: the operator no longer allows it</Badge> : null}
      {set.isError ? <Alert tone="error">{errorMessage(set.error)}</Alert> : null}
    </div>
  );
}

/** Overrides for one project or key: listed with a button to clear each, and a dialog to add one. */
function TargetOverrides({ policy, writable, names, onAdd }: { policy: AccountGuardrail; writable: boolean; names: (scope: 'project' | 'key', id: string) => string; onAdd: () => void }) {
  const set = useSetOverride();
  const targeted = policy.overrides.filter((override) => override.scope !== 'account');
  return (
    <div className="stack">
      {targeted.length === 0 ? <span className="key-meta">None</span> : (
        <ul className="plain-list">
          {targeted.map((override) => (
            <li key={`${override.scope}:${override.id}`}>
              {override.scope === 'project' ? 'Project' : 'Key'} {names(override.scope as 'project' | 'key', override.id)}: <strong>{MODE_LABEL[override.mode]}</strong>
              {override.applied ? null : <> <Badge tone="warning">not applied</Badge></>}
              {writable ? <> <Button variant="ghost" busy={set.isPending} onClick={() => set.mutate({ name: policy.name, scope: override.scope as 'project' | 'key', targetId: override.id, mode: null })}>Clear<span className="visually-hidden"> {policy.name} for {override.scope} {override.id}</span></Button></> : null}
            </li>
          ))}
        </ul>
      )}
      {writable && policy.allowed_modes.length > 0 ? <Button variant="ghost" onClick={onAdd}>For a project or key…<span className="visually-hidden"> {policy.name}</span></Button> : null}
    </div>
  );
}

function TargetForm({ policy, targets, onDone }: { policy: AccountGuardrail; targets: { value: string; label: string }[]; onDone: () => void }) {
  const set = useSetOverride();
  const [target, setTarget] = useState(targets[0]?.value ?? '');
  const [mode, setMode] = useState<string>(policy.allowed_modes[0] ?? 'log');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const [scope, id] = target.split(':') as ['project' | 'key', string];
    set.mutate({ name: policy.name, scope, targetId: id, mode: mode as OverrideMode }, { onSuccess: onDone });
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="Override for a project or key">
      {set.isError ? <Alert tone="error">{errorMessage(set.error)}</Alert> : null}
      {targets.length === 0 ? <Alert tone="info">This account has no projects or keys yet.</Alert> : null}
      <SelectField label="Project or key" value={target} onChange={(event) => setTarget(event.target.value)} options={targets} />
      <SelectField label="Mode" value={mode} onChange={(event) => setMode(event.target.value)} options={policy.allowed_modes.map((value) => ({ value, label: MODE_LABEL[value] ?? value }))} />
      <div className="form-actions"><Button onClick={onDone}>Cancel</Button><Button variant="primary" type="submit" busy={set.isPending} disabled={targets.length === 0}>Save</Button></div>
    </form>
  );
}

/**
 * The operator's guardrail policies that apply to this account, and what the account turned off or relaxed where the
 * operator allows it: for the whole account, or for one project or key.
 */
export function GuardrailsPage() {
  useDocumentTitle('Guardrails');
  const session = useSession();
  const writable = canManage(session.data?.role);
  const accountId = session.data?.account?.id ?? '';
  // The list takes the right to read keys, which the billing role lacks: it is not asked for then.
  const readable = session.data?.role !== 'billing';
  const policies = useAccountGuardrails(readable);
  const keys = useKeys(readable);
  const projects = useProjects(readable);
  const [adding, setAdding] = useState<AccountGuardrail | null>(null);
  const names = (scope: 'project' | 'key', id: string): string => (scope === 'project'
    ? projects.data?.data.find((project) => project.id === id)?.name
    : keys.data?.data.find((key) => key.id === id)?.name) ?? id;
  const targets = [
    ...(projects.data?.data ?? []).filter((project) => project.id !== 'default').map((project) => ({ value: `project:${project.id}`, label: `Project ${project.name}` })),
    ...(keys.data?.data ?? []).filter((key) => key.status !== 'revoked').map((key) => ({ value: `key:${key.id}`, label: `Key ${key.name} (${key.hint})` })),
  ];
  return (
    <div className="page stack">
      <PageHeader title="Guardrails" description="The checks the gateway's operator runs on this account's prompts and answers. Where the operator allows it, you can make a policy milder (log instead of block or mask) or turn it off, for the whole account, one project or one key; the most specific setting wins." />
      {!readable ? <Alert tone="info">Your role does not see the account's keys or their guardrails; an owner or admin of the account manages them.</Alert> : null}
      {writable || !readable ? null : <Alert tone="info">Your role reads these settings; an owner or admin of the account changes them.</Alert>}
      {!readable ? null : <Card>
        {policies.isPending ? <Loading /> : null}
        {policies.isError ? <Alert tone="error">{errorMessage(policies.error)}</Alert> : null}
        {policies.data?.data.length === 0 ? <p className="empty">No guardrail policies apply to this account.</p> : null}
        {policies.data === undefined || policies.data.data.length === 0 ? null : (
          <div className="table-scroll"><table className="table table-cards" data-testid="account-guardrails-table"><caption className="visually-hidden">Guardrail policies that apply to this account</caption>
            <thead><tr><th scope="col">Policy</th><th scope="col">What it does</th><th scope="col">Applies on</th><th scope="col">Whole account</th><th scope="col">Projects and keys</th></tr></thead>
            <tbody>{policies.data.data.map((policy) => (
              <tr key={policy.name} data-guardrail={policy.name}>
                <th scope="row"><span className="mono wrap-anywhere">{policy.name}</span><span className="key-meta">{ALLOWANCE[policy.accounts_may_override]}</span></th>
                <td data-label="What it does">{KIND_LABEL[policy.kind] ?? policy.kind}: <Badge tone={policy.mode === 'block' ? 'danger' : policy.mode === 'mask' ? 'info' : 'neutral'}>{policy.mode}</Badge> on {policy.applies_to === 'both' ? 'prompts and answers' : policy.applies_to === 'input' ? 'prompts' : 'answers'}</td>
                <td data-label="Applies on"><AppliesOn policy={policy} names={names} /></td>
                <td data-label="Whole account"><AccountSetting policy={policy} accountId={accountId} writable={writable} /></td>
                <td data-label="Projects and keys"><TargetOverrides policy={policy} writable={writable} names={names} onAdd={() => setAdding(policy)} /></td>
              </tr>
            ))}</tbody></table></div>
        )}
      </Card>}
      <Dialog open={adding !== null} title={adding === null ? '' : `${adding.name} for a project or key`} onClose={() => setAdding(null)}>
        {adding === null ? null : <TargetForm policy={adding} targets={targets} onDone={() => setAdding(null)} />}
      </Dialog>
    </div>
  );
}
