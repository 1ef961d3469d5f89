import { useState, type FormEvent } from 'react';
import { draftNumbers } from '../../ui/draft-numbers';
import type { ApiKey, BudgetPeriod, CatalogModel, KeyInput, OfferedGuardrail, OfferedMcpServer, Project } from '../../api/types';
import { GuardrailPicker } from './guardrail-picker';
import { formatCost, isoToLocalInput, localInputToIso } from '../../format/format';
import { Button } from '../../ui/button';
import { Alert } from '../../ui/feedback';
import { FieldFrame, SelectField, TextField } from '../../ui/field';

interface Draft {
  name: string;
  environment: string;
  quota: string;
  models: string[];
  restrictModels: boolean;
  ipAllowlist: string;
  expiresAt: string;
  rpm: string;
  tpm: string;
  concurrency: string;
  budgetPeriod: BudgetPeriod | '';
  budgetLimit: string;
  browserAccess: boolean;
  origins: string;
  /** A project id, or `default`. */
  project: string;
  /** Guardrail policy names on the key. */
  guardrails: string[];
  /** Off: every MCP server the account may use (`allowed_mcp_servers: null`); on: only `mcpServers` (none ticked: none). */
  restrictMcp: boolean;
  mcpServers: string[];
}

/** The same words the server attaches to a key with browser origins (`allowed_origins_warning`). */
const BROWSER_ACCESS_WARNING = 'Browsers on these origins may call the API with this key, so anyone who can read the page can copy the key. Keep keys on a server unless the key is meant to be public (tight quota, budget and model allowlist).';

const budgetPeriods = [
  { value: '', label: 'No budget' },
  { value: 'day', label: 'Per day' },
  { value: 'week', label: 'Per week' },
  { value: 'month', label: 'Per month' },
];

function isBudgetPeriod(value: string): value is BudgetPeriod | '' {
  return value === '' || value === 'day' || value === 'week' || value === 'month';
}

/** An origin exactly as browsers send it: http(s), host, optional port; no path, no trailing slash. */
function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text;
  } catch {
    return false;
  }
}

function draftOf(key: ApiKey | null, projects: Project[]): Draft {
  return {
    // A new key goes to the first project the caller may use (a member scoped to projects has no default project).
    project: key === null ? (projects[0]?.id ?? 'default') : (key.project_id ?? 'default'),
    name: key?.name ?? '',
    environment: key?.environment ?? '',
    quota: key?.quota_usd == null ? '' : String(key.quota_usd),
    models: key?.allowed_models ?? [],
    restrictModels: key?.allowed_models != null,
    ipAllowlist: (key?.ip_allowlist ?? []).join('\n'),
    expiresAt: isoToLocalInput(key?.expires_at ?? null),
    rpm: key?.rpm == null ? '' : String(key.rpm),
    tpm: key?.tpm == null ? '' : String(key.tpm),
    concurrency: key?.concurrency == null ? '' : String(key.concurrency),
    budgetPeriod: key?.budget?.period ?? '',
    budgetLimit: key?.budget == null ? '' : String(key.budget.limit_usd),
    browserAccess: key?.allowed_origins != null,
    origins: (key?.allowed_origins ?? []).join('\n'),
    guardrails: key?.guardrails ?? [],
    restrictMcp: key?.allowed_mcp_servers != null,
    mcpServers: key?.allowed_mcp_servers ?? [],
  };
}

/**
 * The servers of a key's MCP allowlist the account may not use, refused with the words the server refuses them
 * with (`allowed_mcp_servers` names only servers the operator opened to the account).
 */
export function mcpServersRefusal(names: readonly string[], offered: readonly OfferedMcpServer[]): string | null {
  const granted = new Set(offered.map((server) => server.name));
  const refused = names.filter((name) => !granted.has(name));
  if (refused.length === 0) return null;
  return `This account may not use the MCP server${refused.length === 1 ? '' : 's'} ${refused.map((name) => `'${name}'`).join(', ')}.`;
}

type Parsed = { ok: true; input: KeyInput } | { ok: false; errors: Partial<Record<keyof Draft, string>> };

function parseDraft(draft: Draft, offeredMcpServers: readonly OfferedMcpServer[]): Parsed {
  const errors: Partial<Record<keyof Draft, string>> = {};
  const { money, count } = draftNumbers<keyof Draft>(errors);
  const name = draft.name.trim();
  if (name === '') errors.name = 'Give the key a name.';
  else if (name.length > 100) errors.name = 'At most 100 characters.';
  const ips = draft.ipAllowlist.split(/[\s,]+/).map((entry) => entry.trim()).filter((entry) => entry !== '');
  const expiresAt = localInputToIso(draft.expiresAt);
  if (draft.expiresAt !== '' && expiresAt === null) errors.expiresAt = 'Enter a date and time.';
  else if (expiresAt !== null && Date.parse(expiresAt) <= Date.now()) errors.expiresAt = 'Choose a time in the future.';
  if (draft.restrictModels && draft.models.length === 0) errors.models = 'Pick at least one model, or allow every model.';
  const budgetLimit = draft.budgetPeriod === '' ? null : money('budgetLimit', draft.budgetLimit);
  if (draft.budgetPeriod !== '' && budgetLimit === null) errors.budgetLimit = 'Enter the budget in USD, or choose no budget.';
  const origins = draft.origins.split(/[\s,]+/).filter((entry) => entry !== '');
  const badOrigin = origins.find((origin) => !isOrigin(origin));
  if (draft.browserAccess && badOrigin !== undefined) errors.origins = `${badOrigin} is not an origin: scheme, host and optional port, such as https://app.example.com (no path, no trailing slash).`;
  else if (draft.browserAccess && origins.length === 0) errors.origins = 'Enter at least one origin, or turn browser access off.';
  const mcpRefusal = draft.restrictMcp ? mcpServersRefusal(draft.mcpServers, offeredMcpServers) : null;
  if (mcpRefusal !== null) errors.mcpServers = mcpRefusal;
  const input: KeyInput = {
    name,
    environment: draft.environment.trim() === '' ? null : draft.environment.trim(),
    quota_usd: money('quota', draft.quota),
    allowed_models: draft.restrictModels ? draft.models : null,
    ip_allowlist: ips.length === 0 ? null : ips,
    expires_at: expiresAt,
    rpm: count('rpm', draft.rpm),
    tpm: count('tpm', draft.tpm),
    concurrency: count('concurrency', draft.concurrency),
    budget: draft.budgetPeriod === '' || budgetLimit === null ? null : { period: draft.budgetPeriod, limit_usd: budgetLimit },
    allowed_origins: draft.browserAccess ? origins : null,
    project_id: draft.project,
    guardrails: draft.guardrails,
    allowed_mcp_servers: draft.restrictMcp ? draft.mcpServers : null,
  };
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, input };
}

interface KeyFormProps {
  initial: ApiKey | null;
  models: CatalogModel[];
  /** The projects the caller may put keys in (the default project first, when they may). */
  projects: Project[];
  /** The guardrail policies the operator lets accounts attach to keys. */
  guardrails: OfferedGuardrail[];
  /** The MCP servers the account's keys may name. */
  mcpServers: OfferedMcpServer[];
  submitLabel: string;
  busy: boolean;
  serverError: string | null;
  onSubmit: (input: KeyInput) => void;
  onCancel: () => void;
}

/** Every attribute of a key, for creating and editing alike; empty fields mean "no limit". */
export function KeyForm({ initial, models, projects, guardrails, mcpServers, submitLabel, busy, serverError, onSubmit, onCancel }: KeyFormProps) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial, projects));
  const chosenProject = projects.find((project) => project.id === draft.project) ?? null;
  const [errors, setErrors] = useState<Partial<Record<keyof Draft, string>>>({});
  const set = <Field extends keyof Draft>(field: Field, value: Draft[Field]) => setDraft((current) => ({ ...current, [field]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDraft(draft, mcpServers);
    if (!parsed.ok) {
      setErrors(parsed.errors);
      return;
    }
    setErrors({});
    onSubmit(parsed.input);
  };
  const toggleModel = (id: string, checked: boolean) =>
    set('models', checked ? [...draft.models, id] : draft.models.filter((model) => model !== id));
  const toggleMcpServer = (name: string, checked: boolean) =>
    set('mcpServers', checked ? [...draft.mcpServers, name] : draft.mcpServers.filter((chosen) => chosen !== name));
  // Servers the key names that the account may not use (set by the operator, or no longer opened to the account).
  const offeredMcpNames = new Set(mcpServers.map((server) => server.name));
  const ungrantedMcpServers = draft.mcpServers.filter((name) => !offeredMcpNames.has(name));

  return (
    <form className="key-form" onSubmit={submit} noValidate>
      {serverError === null ? null : <Alert tone="error">{serverError}</Alert>}
      <fieldset>
        <legend>Key</legend>
        <div className="form-grid">
          <TextField label="Name" value={draft.name} onChange={(event) => set('name', event.target.value)} required maxLength={100} error={errors.name} autoFocus />
          {projects.length > 1 || (projects.length === 1 && projects[0]?.default !== true) ? (
            <SelectField label="Project" name="key-project" value={draft.project} onChange={(event) => set('project', event.target.value)}
              options={projects.map((project) => ({ value: project.id, label: project.name }))}
              hint={chosenProject === null || chosenProject.default ? 'The account\'s own limits apply.' : 'The project\'s budget, limits and allowed models apply as well as the key\'s.'} />
          ) : null}
          <TextField label="Environment label" value={draft.environment} onChange={(event) => set('environment', event.target.value)} placeholder="production" maxLength={40} hint="Optional, e.g. production or staging." />
          <TextField label="Expires" type="datetime-local" value={draft.expiresAt} onChange={(event) => set('expiresAt', event.target.value)} error={errors.expiresAt} hint="Empty: never." />
        </div>
      </fieldset>
      <fieldset>
        <legend>Spending</legend>
        <div className="form-grid">
          <TextField label="Quota cap (USD)" type="number" inputMode="decimal" min={0} step="0.01" value={draft.quota} onChange={(event) => set('quota', event.target.value)} error={errors.quota} hint="Total this key may spend. Empty: no cap." />
          <SelectField label="Budget period" options={budgetPeriods} value={draft.budgetPeriod} onChange={(event) => { if (isBudgetPeriod(event.target.value)) set('budgetPeriod', event.target.value); }}
            hint="Resets at 00:00 UTC: every day, every Monday or on the 1st. The key pauses when it is spent." />
          {draft.budgetPeriod === '' ? null : (
            <TextField label="Budget limit (USD)" type="number" inputMode="decimal" min={0} step="0.01" value={draft.budgetLimit} onChange={(event) => set('budgetLimit', event.target.value)} error={errors.budgetLimit}
              hint={initial?.budget != null && initial.budget.period === draft.budgetPeriod ? `Spent this period: ${formatCost(initial.budget.spent_usd)}. Changing only the limit keeps it.` : 'A new budget or period starts from zero.'} />
          )}
        </div>
      </fieldset>
      <fieldset>
        <legend>Rate limits</legend>
        <div className="form-grid">
          <TextField label="Requests per minute" type="number" inputMode="numeric" min={1} step={1} value={draft.rpm} onChange={(event) => set('rpm', event.target.value)} error={errors.rpm} hint="Empty: the account's limit." />
          <TextField label="Tokens per minute" type="number" inputMode="numeric" min={1} step={1} value={draft.tpm} onChange={(event) => set('tpm', event.target.value)} error={errors.tpm} />
          <TextField label="Concurrent requests" type="number" inputMode="numeric" min={1} step={1} value={draft.concurrency} onChange={(event) => set('concurrency', event.target.value)} error={errors.concurrency} />
        </div>
      </fieldset>
      <fieldset>
        <legend>Access</legend>
        <div className="checkbox-row">
          <input id="restrict-models" type="checkbox" checked={draft.restrictModels} onChange={(event) => set('restrictModels', event.target.checked)} />
          <label htmlFor="restrict-models">Only allow the models chosen below</label>
        </div>
        {draft.restrictModels ? (
          <div className="model-picker" role="group" aria-label="Allowed models">
            {models.length === 0 ? <p className="field-hint">No models are available to this account.</p> : null}
            {models.map((model) => (
              <label key={model.id} className="checkbox-row">
                <input type="checkbox" checked={draft.models.includes(model.id)} onChange={(event) => toggleModel(model.id, event.target.checked)} />
                <span className="mono">{model.id}</span>
              </label>
            ))}
            {errors.models === undefined ? null : <p className="field-error" role="alert">{errors.models}</p>}
          </div>
        ) : null}
        {mcpServers.length === 0 && !draft.restrictMcp ? null : (
          <>
            <div className="checkbox-row">
              <input id="restrict-mcp" type="checkbox" checked={draft.restrictMcp} onChange={(event) => set('restrictMcp', event.target.checked)} />
              <label htmlFor="restrict-mcp">Only allow the MCP servers chosen below</label>
            </div>
            {draft.restrictMcp ? <p className="field-hint">Tools of these servers only, through /mcp and the models' MCP tools. None ticked: no MCP server.</p> : null}
            {draft.restrictMcp ? (
              <div className="model-picker" role="group" aria-label="Allowed MCP servers">
                {mcpServers.map((server) => (
                  <label key={server.name} className="checkbox-row">
                    <input type="checkbox" checked={draft.mcpServers.includes(server.name)} onChange={(event) => toggleMcpServer(server.name, event.target.checked)} />
                    <span className="mono">{server.name}</span>
                  </label>
                ))}
                {ungrantedMcpServers.map((name) => (
                  <label key={name} className="checkbox-row">
                    <input type="checkbox" checked onChange={(event) => toggleMcpServer(name, event.target.checked)} />
                    <span><span className="mono">{name}</span> <span className="key-meta">not available to this account</span></span>
                  </label>
                ))}
                {errors.mcpServers === undefined ? null : <p className="field-error" role="alert">{errors.mcpServers}</p>}
              </div>
            ) : null}
          </>
        )}
        <FieldFrame label="IP allowlist" hint="Addresses or CIDR ranges (203.0.113.0/24, 2001:db8::/32), one per line. Empty: any address.">
          {({ inputId, describedBy }) => (
            <textarea id={inputId} aria-describedby={describedBy} rows={3} value={draft.ipAllowlist} onChange={(event) => set('ipAllowlist', event.target.value)} spellCheck={false} className="mono" />
          )}
        </FieldFrame>
        <div className="browser-access">
          <div className="checkbox-row">
            <input id="browser-access" type="checkbox" checked={draft.browserAccess} onChange={(event) => set('browserAccess', event.target.checked)} />
            <label htmlFor="browser-access">Allow direct browser access (dangerous)</label>
          </div>
          {draft.browserAccess ? (
            <>
              <Alert tone="warning"><strong>This exposes the key.</strong> {initial?.allowed_origins_warning ?? BROWSER_ACCESS_WARNING}</Alert>
              <FieldFrame label="Allowed browser origins" hint="Origins such as https://app.example.com, one per line: scheme, host and optional port." error={errors.origins}>
                {({ inputId, describedBy }) => (
                  <textarea id={inputId} aria-describedby={describedBy} aria-invalid={errors.origins === undefined ? undefined : true} rows={2} value={draft.origins} onChange={(event) => set('origins', event.target.value)} spellCheck={false} className="mono" />
                )}
              </FieldFrame>
            </>
          ) : null}
        </div>
      </fieldset>
      <GuardrailPicker offered={guardrails} initial={initial?.guardrails ?? []} chosen={draft.guardrails} onChange={(chosen) => set('guardrails', chosen)}
        hint="Checks on this key's prompts and answers, on top of the account's, the project's and the model's: personal data masked, words refused, and so on." />
      <div className="form-actions">
        <Button onClick={onCancel}>Cancel</Button>
        <Button type="submit" variant="primary" busy={busy}>{submitLabel}</Button>
      </div>
    </form>
  );
}
