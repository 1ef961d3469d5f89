import { chargesNothing } from '../billing/compute-cost.js';
import type { Catalog } from '../routing/catalog.js';
import type { Account, ApiKey } from '../domain/records.js';
import type { ModelKind } from '../domain/model-records.js';
import { rateLimitRefusal, type AdmissionDependencies } from './admission.js';
import { modelFreeRequestRules } from './admission-windows.js';
import type { RequestCharge } from '../billing/settle.js';
import { projectFundsOf } from '../projects/project-admission.js';

export interface BeforeBodyRequest {
  key: ApiKey;
  account: Account;
  /** The kind of model the endpoint serves (the request names its model only in the body). */
  kind: ModelKind;
}

/** True when the key may use a model of this kind that bills nothing: then an empty wallet is no reason to refuse. */
function mayUseFreeModel(catalog: Pick<Catalog, 'models'>, key: ApiKey, kind: ModelKind): boolean {
  return catalog.models().some((model) => model.kind === kind && chargesNothing(model.pricing) && (key.allowedModels === null || key.allowedModels.includes(model.id)));
}

/**
 * Refuses a caller who can pay nothing at all for a model of this kind (402 `insufficient_balance`, or 429
 * `quota_exhausted`), as admission would; nothing is held or counted. Answers the account's active subscriptions.
 */
export async function assertCanPayAnything(dependencies: AdmissionDependencies & { catalog: Pick<Catalog, 'models'> }, request: BeforeBodyRequest): Promise<Awaited<ReturnType<AdmissionDependencies['subscriptions']['active']>>> {
  const { key, account } = request;
  const subscriptions = await dependencies.subscriptions.active(account.id);
  if (!mayUseFreeModel(dependencies.catalog, key, request.kind)) {
    await dependencies.ledger.assertCanPay({
      accountId: account.id,
      keyId: key.id,
      keyCapped: key.quotaNano !== null,
      keyBudgeted: key.budget !== null,
      project: projectFundsOf(key),
      subscriptions: subscriptions.map(({ subscription }) => subscription.id),
    });
  }
  return subscriptions;
}

/**
 * What can be refused before an upload is read, with the errors admission would give after it: a caller who can pay
 * nothing at all (402 `insufficient_balance`, or 429 `quota_exhausted` for a key paused at its cap or a used-up
 * subscription that allows no overage), and the request-rate windows that do not depend on the model (key, account
 * tier and plan RPM; 429 with Retry-After). Nothing is held; the request is counted once in those windows here, and
 * `admit` (once the model is known) reserves the money and checks everything else without counting them again.
 * Returns the count taken (null: none), which stands once the request is admitted and is given back otherwise.
 */
export async function admitBeforeBody(dependencies: AdmissionDependencies & { catalog: Pick<Catalog, 'models'> }, request: BeforeBodyRequest): Promise<RequestCharge | null> {
  const { key, account } = request;
  const subscriptions = await assertCanPayAnything(dependencies, request);
  const rules = modelFreeRequestRules(dependencies, key, account, subscriptions[0] ?? null);
  if (rules.length === 0) return null;
  const now = dependencies.clock.now();
  const decision = await dependencies.limiter.consume(rules.map((rule) => ({ rule, cost: 1 })), now);
  if (!decision.allowed) throw rateLimitRefusal(decision);
  return { rules, states: decision.states, chargedAt: now };
}
