/**
 * An account's overrides of the operator's guardrail policies, as its owners and admins manage them in the console:
 * the policies that apply to the account's requests (bound to models, to the account, its projects or its keys), what
 * the operator lets the account do to each (override-rules.ts), and setting or clearing an override for the account,
 * one project or one key of it. Every change tells every instance's policy book before the call answers, so the next
 * request runs with it; targets are looked up within the account (another account's project or key is not found).
 */
import { z } from 'zod';
import type { AccountGuardrailJson, AccountGuardrailListJson } from '../contract/guardrail-overrides.js';
import type { GuardrailOverride, GuardrailOverrideScope, GuardrailRecord } from '../domain/guardrail-records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { InvalidationBus } from '../invalidation/invalidation-bus.js';
import { isoTime } from '../management/time-input.js';
import { parseInput } from '../management/parse-input.js';
import type { Storage } from '../storage/storage.js';
import { allowedOverrideModes, overrideRefusal, overrideRuleOf } from './override-rules.js';

export interface AccountOverrideDeps {
  storage: Pick<Storage, 'guardrails' | 'keys' | 'projects'>;
  invalidation: InvalidationBus;
  now: () => number;
}

/** The projects a caller sees (null: the whole account). */
export type VisibleProjects = ReadonlySet<string> | null;

const setOverrideSchema = z.strictObject({
  scope: z.enum(['account', 'project', 'key']).default('account'),
  /** the project's or key's id; for the account, absent or the account's own id */
  target_id: z.string().min(1).max(200).optional(),
  mode: z.enum(['off', 'log', 'mask']),
});

/** Where the account's policies are bound and which of its projects and keys the caller sees. */
async function accountTargets(deps: AccountOverrideDeps, accountId: string, visible: VisibleProjects): Promise<{ projects: Set<string>; keys: Set<string> }> {
  const projects = (await deps.storage.projects.listByAccount(accountId)).map((project) => project.id).filter((id) => visible === null || visible.has(id));
  const keyOwners: (string | null)[] = visible === null ? [null, ...projects] : projects;
  const keys = new Set<string>();
  for (const projectId of keyOwners) for (const id of await deps.storage.projects.keyIds(accountId, projectId)) keys.add(id);
  return { projects: new Set(projects), keys };
}

function entryOf(record: GuardrailRecord, appliesOn: AccountGuardrailJson['applies_on'], overrides: readonly GuardrailOverride[]): AccountGuardrailJson {
  return {
    name: record.name,
    kind: record.kind,
    mode: record.mode,
    applies_to: record.applies_to,
    accounts_may_override: overrideRuleOf(record),
    allowed_modes: allowedOverrideModes(record),
    applies_on: appliesOn,
    overrides: overrides.filter((o) => o.guardrailId === record.id).map((o) => ({
      scope: o.scope, id: o.targetId, mode: o.mode, applied: overrideRefusal(record, o.mode) === null, updated_at: isoTime(o.updatedAt),
    })),
  };
}

/**
 * The policies that apply to the account's requests as the caller sees them (a member scoped to projects: the
 * account's, the models' and their projects' and keys'), with the account's overrides of each; a policy the account
 * overrode that no longer applies is listed too, so its override can be cleared.
 */
export async function accountGuardrails(deps: AccountOverrideDeps, accountId: string, visible: VisibleProjects): Promise<AccountGuardrailListJson> {
  const [records, bindings, overrides, targets] = await Promise.all([
    deps.storage.guardrails.list(),
    deps.storage.guardrails.listBindings(),
    deps.storage.guardrails.listOverrides(accountId),
    accountTargets(deps, accountId, visible),
  ]);
  const seen = overrides.filter((o) => o.scope === 'account' || (o.scope === 'project' ? targets.projects.has(o.targetId) : targets.keys.has(o.targetId)));
  const data: AccountGuardrailJson[] = [];
  for (const record of records) {
    const appliesOn: AccountGuardrailJson['applies_on'] = { models: false, account: false, projects: [], keys: [] };
    for (const binding of bindings) {
      if (!binding.names.includes(record.name)) continue;
      if (binding.scope === 'model') appliesOn.models = true;
      else if (binding.scope === 'account') appliesOn.account ||= binding.targetId === accountId;
      else if (binding.scope === 'project' && targets.projects.has(binding.targetId)) appliesOn.projects.push(binding.targetId);
      else if (binding.scope === 'key' && targets.keys.has(binding.targetId)) appliesOn.keys.push(binding.targetId);
    }
    const applies = appliesOn.models || appliesOn.account || appliesOn.projects.length > 0 || appliesOn.keys.length > 0;
    if (applies || seen.some((o) => o.guardrailId === record.id)) data.push(entryOf(record, appliesOn, seen));
  }
  return { data };
}

/** The target's id within the account: 404 for a project or key of another account (or none). */
async function requireTarget(deps: AccountOverrideDeps, accountId: string, scope: GuardrailOverrideScope, targetId: string | undefined): Promise<string> {
  if (scope === 'account') {
    if (targetId !== undefined && targetId !== accountId) throw new GatewayError('not_found', `No account with id '${targetId}'.`);
    return accountId;
  }
  if (targetId === undefined) throw new GatewayError('bad_request', `'target_id': name the ${scope} the override is for.`, { param: 'target_id' });
  if (scope === 'project') {
    const project = await deps.storage.projects.getById(targetId);
    if (project === null || project.accountId !== accountId) throw new GatewayError('not_found', `No project with id '${targetId}'.`);
    return project.id;
  }
  const key = await deps.storage.keys.getById(targetId);
  if (key === null || key.accountId !== accountId || key.playground) throw new GatewayError('not_found', `No key with id '${targetId}'.`);
  return key.id;
}

/** The policy named, if it applies to the account (the same 404 for an unknown name and one that does not). */
async function requireApplying(deps: AccountOverrideDeps, accountId: string, name: string): Promise<GuardrailRecord> {
  const listed = await accountGuardrails(deps, accountId, null);
  const record = listed.data.some((entry) => entry.name === name) ? (await deps.storage.guardrails.list()).find((candidate) => candidate.name === name) : undefined;
  if (record === undefined) throw new GatewayError('not_found', `No guardrail policy named '${name}' applies to this account.`);
  return record;
}

/**
 * Sets the account's override of the policy `name` (body: `scope`, `target_id`, `mode`). 403 when the operator does
 * not let accounts change the policy; 400 when the mode is not one the policy allows now (not milder, `off` where only
 * relaxing is allowed, `mask` on a verdict kind).
 */
export async function setAccountOverride(deps: AccountOverrideDeps, accountId: string, userId: string | null, name: string, body: unknown): Promise<AccountGuardrailJson> {
  const input = parseInput(setOverrideSchema, body);
  const record = await requireApplying(deps, accountId, name);
  const targetId = await requireTarget(deps, accountId, input.scope, input.target_id);
  if (overrideRuleOf(record) === 'none') throw new GatewayError('forbidden', overrideRefusal(record, input.mode) ?? `The operator does not let accounts change '${name}'.`);
  const refusal = overrideRefusal(record, input.mode);
  if (refusal !== null) throw new GatewayError('bad_request', refusal, { param: 'mode' });
  await deps.storage.guardrails.setOverride({ accountId, scope: input.scope, targetId, guardrailId: record.id, mode: input.mode, setBy: userId, updatedAt: deps.now() });
  await deps.invalidation.publish({ kind: 'guardrails' });
  return requireEntry(deps, accountId, name);
}

/** Clears the account's override of the policy at one target (query `scope`, `target_id`); 404 when there is none. */
export async function clearAccountOverride(deps: AccountOverrideDeps, accountId: string, name: string, query: { scope: string | null; targetId: string | null }): Promise<void> {
  const scope = parseInput(z.object({ scope: z.enum(['account', 'project', 'key']) }), { scope: query.scope ?? 'account' }).scope;
  const record = (await deps.storage.guardrails.list()).find((candidate) => candidate.name === name);
  const targetId = await requireTarget(deps, accountId, scope, query.targetId ?? undefined);
  if (record === undefined || !(await deps.storage.guardrails.clearOverride(accountId, scope, targetId, record.id))) {
    throw new GatewayError('not_found', `This account has no override of '${name}' on that ${scope}.`);
  }
  await deps.invalidation.publish({ kind: 'guardrails' });
}

async function requireEntry(deps: AccountOverrideDeps, accountId: string, name: string): Promise<AccountGuardrailJson> {
  const entry = (await accountGuardrails(deps, accountId, null)).data.find((candidate) => candidate.name === name);
  if (entry === undefined) throw new GatewayError('not_found', `No guardrail policy named '${name}' applies to this account.`);
  return entry;
}
