/**
 * The operator's guardrail policies and their bindings, from memory on the request path: read whole (a deployment
 * has tens of policies, not thousands), re-read on every instance when they change (a `guardrails` invalidation)
 * and otherwise after a TTL. A request's policy set is the union of its model's, account's, key's project's and
 * key's, less what the account turned off or made milder where the operator allows it (override-rules.ts), compiled
 * once per combination; a deployment or request with no bindings costs one map lookup.
 */
import type { InvalidationBus } from '../invalidation/invalidation-bus.js';
import type { Clock } from '../shared/clock.js';
import type { GuardrailOverride, GuardrailOverrideMode, GuardrailOverrideScope, GuardrailRecord, GuardrailRepository, GuardrailScope } from '../domain/guardrail-records.js';
import { GuardrailSet } from '../guardrails/policy.js';
import type { GuardrailPolicy } from '../guardrails/settings.js';
import { loadOnce } from '../shared/load-once.js';
import { WebhookGuardrailCaller } from './webhook-guardrail.js';
import { overrideRefusal } from './override-rules.js';

/** How long the snapshot is trusted while changes are pushed to this instance, and while they may not be. */
const LIVE_TTL_MS = 60_000;
const UNPUSHED_TTL_MS = 1000;
/** Compiled sets one process keeps at most (dropped whole when full; each is rebuilt on its next request). */
const MAX_SETS = 10_000;

/** The policies that apply to one request, compiled, with their names in evaluation order. */
export interface ResolvedGuardrails {
  set: GuardrailSet;
  policies: readonly GuardrailPolicy[];
}

/**
 * The schema stored policies are checked against, with the validation library it is written in: loaded with the
 * first snapshot that binds a policy, so a gateway without guardrails never holds it.
 */
const settingsModule = loadOnce(() => import('../guardrails/settings.js'));
type PolicySchema = Awaited<ReturnType<typeof settingsModule.get>>['guardrailInputSchema'];

interface Snapshot {
  /** null when nothing is bound (no policy is ever checked) */
  schema: PolicySchema | null;
  byName: ReadonlyMap<string, GuardrailRecord>;
  bindings: ReadonlyMap<string, readonly string[]>;
  /** Accounts' overrides by scope and target, then by policy id. */
  overrides: ReadonlyMap<string, ReadonlyMap<string, GuardrailOverride>>;
  sets: Map<string, ResolvedGuardrails | null>;
  loadedAt: number;
}

/** Who makes a request: the key, its account and its project (null: the account's default project, which binds nothing). */
export interface RequestCaller {
  accountId: string;
  projectId: string | null;
  keyId: string;
}

const bindingKey = (scope: GuardrailScope, id: string): string => `${scope}\u0000${id}`;
const overrideKey = (scope: GuardrailOverrideScope, id: string): string => `${scope}\u0000${id}`;

function overridesByTarget(overrides: readonly GuardrailOverride[]): Map<string, Map<string, GuardrailOverride>> {
  const byTarget = new Map<string, Map<string, GuardrailOverride>>();
  for (const override of overrides) {
    const key = overrideKey(override.scope, override.targetId);
    const ofTarget = byTarget.get(key) ?? new Map<string, GuardrailOverride>();
    ofTarget.set(override.guardrailId, override);
    byTarget.set(key, ofTarget);
  }
  return byTarget;
}

export class GuardrailBook {
  #snapshot: Snapshot | null = null;
  #loading: Promise<Snapshot> | null = null;
  /** Bumped on every invalidation: a load that started before one is not kept. */
  #generation = 0;
  /** Calls the webhook policies (one connection pool for every request). */
  readonly webhooks = new WebhookGuardrailCaller();

  constructor(
    private readonly repository: Pick<GuardrailRepository, 'list' | 'listBindings' | 'listOverrides'>,
    private readonly clock: Clock,
    private readonly invalidation: InvalidationBus,
  ) {
    invalidation.subscribe((message) => {
      if (message.kind === 'guardrails' || message.kind === 'all') {
        this.#generation += 1;
        this.#snapshot = null;
      }
    });
  }

  /** The policies of a request to `modelId` with this key (its account and project); null when none apply. */
  forRequest(modelId: string, caller: RequestCaller): ResolvedGuardrails | null | Promise<ResolvedGuardrails | null> {
    const snapshot = this.#snapshot;
    const ttl = this.invalidation.live ? LIVE_TTL_MS : UNPUSHED_TTL_MS;
    if (snapshot !== null && this.clock.now() - snapshot.loadedAt < ttl) return resolve(snapshot, modelId, caller);
    return this.#load().then((loaded) => resolve(loaded, modelId, caller));
  }

  close(): Promise<void> {
    return this.webhooks.close();
  }

  #load(): Promise<Snapshot> {
    if (this.#loading !== null) return this.#loading;
    const generation = this.#generation;
    const loadedAt = this.clock.now();
    const loading = Promise.all([this.repository.list(), this.repository.listBindings(), this.repository.listOverrides()]).then(async ([records, bindings, overrides]) => {
      const schema = bindings.length === 0 ? null : (await settingsModule.get()).guardrailInputSchema;
      const snapshot: Snapshot = {
        schema,
        byName: new Map(records.map((record) => [record.name, record])),
        bindings: new Map(bindings.map((binding) => [bindingKey(binding.scope, binding.targetId), binding.names])),
        overrides: overridesByTarget(overrides),
        sets: new Map(),
        loadedAt,
      };
      if (generation === this.#generation) this.#snapshot = snapshot;
      return snapshot;
    }).finally(() => {
      this.#loading = null;
    });
    this.#loading = loading;
    return loading;
  }
}

function resolve(snapshot: Snapshot, modelId: string, { accountId, projectId, keyId }: RequestCaller): ResolvedGuardrails | null {
  const schema = snapshot.schema;
  if (snapshot.bindings.size === 0 || schema === null) return null;
  const model = snapshot.bindings.get(bindingKey('model', modelId));
  const account = snapshot.bindings.get(bindingKey('account', accountId));
  const project = projectId === null ? undefined : snapshot.bindings.get(bindingKey('project', projectId));
  const key = snapshot.bindings.get(bindingKey('key', keyId));
  if (model === undefined && account === undefined && project === undefined && key === undefined) return null;
  const cacheKey = `${modelId}\u0000${accountId}\u0000${projectId ?? ''}\u0000${keyId}`;
  const cached = snapshot.sets.get(cacheKey);
  if (cached !== undefined) return cached;
  // Model first (the operator's defaults), then the account's, its project's and the key's; a name bound twice runs once.
  const names = new Set([...(model ?? []), ...(account ?? []), ...(project ?? []), ...(key ?? [])]);
  // The account's overrides, most specific first: the key's, its project's, the account's.
  const targets = [overrideKey('key', keyId), ...(projectId === null ? [] : [overrideKey('project', projectId)]), overrideKey('account', accountId)]
    .map((target) => snapshot.overrides.get(target))
    .filter((ofTarget) => ofTarget !== undefined);
  const policies: GuardrailPolicy[] = [];
  for (const name of names) {
    const record = snapshot.byName.get(name);
    // A binding names only existing policies (the admin API checks, and a policy in use cannot be deleted).
    const policy = record === undefined ? null : policyOf(schema, record);
    if (policy === null || record === undefined) continue;
    const mode = targets.length === 0 ? undefined : overriddenMode(record, accountId, targets);
    if (mode === 'off') continue;
    policies.push(mode === undefined ? policy : { ...policy, mode });
  }
  const resolved = policies.length === 0 ? null : { set: new GuardrailSet(policies), policies };
  if (snapshot.sets.size >= MAX_SETS) snapshot.sets.clear();
  snapshot.sets.set(cacheKey, resolved);
  return resolved;
}

/**
 * The mode the account chose for the policy at the most specific of its targets where the policy still allows that
 * choice (an override of another account, or one the operator no longer allows, is passed over); undefined: none.
 */
function overriddenMode(record: GuardrailRecord, accountId: string, targets: readonly ReadonlyMap<string, GuardrailOverride>[]): GuardrailOverrideMode | undefined {
  for (const ofTarget of targets) {
    const override = ofTarget.get(record.id);
    if (override !== undefined && override.accountId === accountId && overrideRefusal(record, override.mode) === null) return override.mode;
  }
  return undefined;
}

/** The stored policy as the engine takes it, checked against the schema the admin API wrote it with; null if it no longer fits. */
function policyOf(schema: PolicySchema, record: GuardrailRecord): GuardrailPolicy | null {
  // A webhook's headers are kept sealed beside its settings; the engine gets them back in place.
  const settings = record.headers === undefined ? record.settings : { ...record.settings, headers: record.headers };
  const parsed = schema.safeParse({ name: record.name, kind: record.kind, mode: record.mode, applies_to: record.applies_to, ...(settings === undefined ? {} : { settings }) });
  return parsed.success ? parsed.data : null;
}
