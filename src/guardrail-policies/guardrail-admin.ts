/**
 * Managing guardrail policies and their bindings: create, change (a rename follows into every binding), delete (not
 * while bound), and the `guardrails: [names]` field models, accounts, projects and keys accept. Every change tells every
 * instance's policy book (a `guardrails` invalidation) before the admin call answers.
 */
import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import type { InvalidationBus } from '../invalidation/invalidation-bus.js';
import { isoTime } from '../management/time-input.js';
import { parseInput } from '../management/parse-input.js';
import { newId } from '../shared/ids.js';
import type { GuardrailBinding, GuardrailOverride, GuardrailRecord, GuardrailRepository, GuardrailScope } from '../domain/guardrail-records.js';
import { overrideRefusal, overrideRuleOf } from './override-rules.js';
import { guardrailInputSchema, type GuardrailPolicy } from '../guardrails/settings.js';
import type { GuardrailPolicyJson } from '../contract/operator.js';

export interface GuardrailAdmin {
  repository: GuardrailRepository;
  invalidation: InvalidationBus;
  now: () => number;
}

/** Policies one model, account, project or key may name. */
const MAX_BOUND = 50;
const namesSchema = z.array(z.string().min(1).max(100)).max(MAX_BOUND);

/** One binding as a policy's `bound_to` shows it. */
export type BoundToJson = NonNullable<GuardrailPolicyJson['bound_to']>[number];

/** An override's account and target as named for the operator: an account-wide one's target is the account. */
function overrideNames(named: BoundToJson | undefined, scope: GuardrailOverride['scope']): { account_email?: string | null; name?: string | null } {
  if (named === undefined) return {};
  const name = named.name ?? null;
  return { account_email: scope === 'account' ? name : named.account_email ?? null, name };
}

/**
 * A policy as the admin API shows it; `bindings` (each with how it is shown, by default its scope and id) give
 * `bound_to`, every one that names the policy; `overrides`, the accounts' overrides of it (named the same way).
 */
export function guardrailJson(
  record: GuardrailRecord,
  bindings?: readonly GuardrailBinding[],
  overrides?: readonly GuardrailOverride[],
  shown?: ReadonlyMap<GuardrailBinding | GuardrailOverride, BoundToJson>,
): GuardrailPolicyJson {
  // Kind, mode and direction were checked by the guardrail schemas when the policy was written.
  return {
    id: record.id,
    object: 'guardrail',
    name: record.name,
    kind: record.kind as GuardrailPolicyJson['kind'],
    mode: record.mode as GuardrailPolicyJson['mode'],
    applies_to: record.applies_to as GuardrailPolicyJson['applies_to'],
    accounts_may_use: record.accounts_may_use === true,
    accounts_may_override: overrideRuleOf(record),
    settings: record.settings ?? {},
    // A webhook's header values are credentials: shown by name only.
    ...(record.kind === 'webhook' ? { header_names: Object.keys(record.headers ?? {}).sort() } : {}),
    ...(bindings === undefined ? {} : { bound_to: bindings.filter((b) => b.names.includes(record.name)).map((b) => shown?.get(b) ?? { scope: b.scope, id: b.targetId }) }),
    ...(overrides === undefined ? {} : {
      overrides: overrides.filter((o) => o.guardrailId === record.id).map((o) => ({
        account_id: o.accountId,
        ...overrideNames(shown?.get(o), o.scope),
        scope: o.scope, id: o.targetId, mode: o.mode, applied: overrideRefusal(record, o.mode) === null, updated_at: isoTime(o.updatedAt),
      })),
    }),
    created_at: isoTime(record.createdAt),
    updated_at: isoTime(record.updatedAt),
  };
}

/** A webhook or moderation policy gets a verdict, not a masked text: it blocks or logs. */
function requireAppliedKind(policy: GuardrailPolicy): void {
  if ((policy.kind === 'webhook' || policy.kind === 'moderation') && policy.mode === 'mask') {
    throw new GatewayError('bad_request', `'mode': a ${policy.kind} guardrail answers a verdict, so it can 'block' or 'log', not 'mask'.`, { param: 'mode' });
  }
}

/** The policy as stored: a webhook's headers leave its settings for the sealed column. */
function recordFields(policy: GuardrailPolicy): Omit<GuardrailRecord, 'id' | 'createdAt' | 'updatedAt'> {
  if (policy.kind !== 'webhook' || policy.settings.headers === undefined) return policy;
  const { headers, ...settings } = policy.settings;
  return { ...policy, settings, headers };
}

async function requireGuardrail(admin: GuardrailAdmin, id: string): Promise<GuardrailRecord> {
  const record = await admin.repository.getById(id);
  if (record === null) throw new GatewayError('not_found', `No guardrail with id '${id}'.`);
  return record;
}

async function requireFreeName(admin: GuardrailAdmin, name: string, except: string | null): Promise<void> {
  const taken = (await admin.repository.list()).some((record) => record.name === name && record.id !== except);
  if (taken) throw new GatewayError('conflict', `A guardrail named '${name}' already exists.`, { param: 'name' });
}

export async function createGuardrail(admin: GuardrailAdmin, body: unknown): Promise<GuardrailRecord> {
  const policy = parseInput(guardrailInputSchema, body);
  requireAppliedKind(policy);
  await requireFreeName(admin, policy.name, null);
  const now = admin.now();
  const record: GuardrailRecord = { ...recordFields(policy), id: newId('grd', now), createdAt: now, updatedAt: now };
  await admin.repository.create(record);
  await admin.invalidation.publish({ kind: 'guardrails' });
  return record;
}

/**
 * A partial change: the result is validated whole, as a new policy would be (settings follow the kind). A webhook's
 * settings written without `headers` keep the headers it has (they are never shown, so cannot be sent back);
 * `headers: {}` removes them.
 */
export async function updateGuardrail(admin: GuardrailAdmin, id: string, body: Record<string, unknown>): Promise<GuardrailRecord> {
  const existing = await requireGuardrail(admin, id);
  const { id: _id, createdAt, updatedAt: _updated, headers: kept, ...current } = existing;
  const merged = { ...current, ...body };
  const sameKind = body.kind === undefined || body.kind === existing.kind;
  const settingsBody = merged.settings;
  if (sameKind && existing.kind === 'webhook' && kept !== undefined && settingsBody !== null && typeof settingsBody === 'object' && !Array.isArray(settingsBody) && !Object.hasOwn(settingsBody, 'headers')) {
    merged.settings = { ...settingsBody, headers: kept };
  }
  // A new kind does not keep settings written for the old one.
  if (body.kind !== undefined && body.kind !== existing.kind && body.settings === undefined) delete (merged as Record<string, unknown>).settings;
  const policy = parseInput(guardrailInputSchema, merged);
  requireAppliedKind(policy);
  if (policy.name !== existing.name) await requireFreeName(admin, policy.name, id);
  const now = admin.now();
  const record: GuardrailRecord = { ...recordFields(policy), id, createdAt, updatedAt: now };
  await admin.repository.update(record);
  if (policy.name !== existing.name) {
    for (const binding of await admin.repository.listBindings()) {
      if (!binding.names.includes(existing.name)) continue;
      await admin.repository.setBinding({ ...binding, names: binding.names.map((name) => (name === existing.name ? policy.name : name)) }, now);
    }
  }
  await admin.invalidation.publish({ kind: 'guardrails' });
  return record;
}

/** Deletes a policy no model, account, project or key names (409 naming where it is bound otherwise). */
export async function deleteGuardrail(admin: GuardrailAdmin, id: string): Promise<GuardrailRecord> {
  const existing = await requireGuardrail(admin, id);
  const bound = (await admin.repository.listBindings()).filter((binding) => binding.names.includes(existing.name));
  if (bound.length > 0) {
    const where = bound.slice(0, 5).map((binding) => `${binding.scope} '${binding.targetId}'`).join(', ');
    throw new GatewayError('conflict', `The guardrail '${existing.name}' is bound to ${where}${bound.length > 5 ? ' and others' : ''}; remove it there first.`);
  }
  await admin.repository.delete(id);
  // Accounts' overrides of it have nothing left to change.
  await admin.repository.clearOverridesOf({ guardrailId: id });
  await admin.invalidation.publish({ kind: 'guardrails' });
  return existing;
}

/**
 * Takes `guardrails` out of a model's, account's, project's or key's body (so the rest is validated as before) and checks that
 * every name is a policy; undefined when the body does not set it. Unknown names are a 400.
 */
export async function takeGuardrailNames(repository: Pick<GuardrailRepository, 'list'>, body: Record<string, unknown>): Promise<string[] | undefined> {
  if (!Object.hasOwn(body, 'guardrails')) return undefined;
  const raw = body.guardrails;
  delete body.guardrails;
  const names = parseInput(z.object({ guardrails: namesSchema.nullable() }), { guardrails: raw }).guardrails ?? [];
  if (names.length === 0) return [];
  const known = new Set((await repository.list()).map((record) => record.name));
  const unknown = names.find((name) => !known.has(name));
  if (unknown !== undefined) throw new GatewayError('bad_request', `'guardrails': no guardrail policy named '${unknown}'.`, { param: 'guardrails' });
  return [...new Set(names)];
}

/**
 * Takes `guardrails` out of a console key or project body, as an account owner or admin may set it: only policies
 * the operator lets accounts use can be added. Policies the operator put on the key or project that accounts may not
 * use stay on it (the account can neither add nor remove them), so its list can be sent back as read. Any other name, unknown or
 * not offered to accounts, is a 400 (the same words for both, so no policy's existence is revealed).
 */
export async function takeAccountGuardrailNames(repository: Pick<GuardrailRepository, 'list'>, body: Record<string, unknown>, current: readonly string[]): Promise<string[] | undefined> {
  if (!Object.hasOwn(body, 'guardrails')) return undefined;
  const raw = body.guardrails;
  delete body.guardrails;
  const names = parseInput(z.object({ guardrails: namesSchema.nullable() }), { guardrails: raw }).guardrails ?? [];
  const offered = new Set((await repository.list()).filter((record) => record.accounts_may_use === true).map((record) => record.name));
  const kept = current.filter((name) => !offered.has(name));
  const refused = names.find((name) => !offered.has(name) && !kept.includes(name));
  if (refused !== undefined) throw new GatewayError('bad_request', `'guardrails': '${refused}' is not a guardrail policy this account may use.`, { param: 'guardrails' });
  return [...new Set([...kept, ...names.filter((name) => offered.has(name))])];
}

/** Binds the names to one target (an empty list unbinds) and tells every instance. */
export async function bindGuardrails(admin: GuardrailAdmin, scope: GuardrailScope, targetId: string, names: readonly string[]): Promise<void> {
  await admin.repository.setBinding({ scope, targetId, names: [...names] }, admin.now());
  await admin.invalidation.publish({ kind: 'guardrails' });
}

/** The names bound to one target (empty: none). */
export async function boundGuardrails(repository: Pick<GuardrailRepository, 'listBindings'>, scope: GuardrailScope, targetId: string): Promise<string[]> {
  return (await repository.listBindings()).find((binding) => binding.scope === scope && binding.targetId === targetId)?.names ?? [];
}
