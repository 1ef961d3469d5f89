import type { BillableUsage } from '../billing/compute-cost.js';
import type { Ledger } from '../billing/ledger.js';
import type { ReserveRequest } from '../billing/ledger-requests.js';
import { reservationAmount } from '../billing/reservation-amount.js';
import type { ActiveSubscription, SubscriptionBook } from '../billing/subscription-book.js';
import { newId } from '../shared/ids.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ClientFamily } from '../codecs/client-family.js';
import type { HostedToolOffer } from '../ir/hosted-tool-offer.js';
import { admittedRateLimitHeaders, rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { AdmissionDecision, ConcurrencyLease, ConcurrencySlot, LimitDecision, LimitRule, LimitState, RateLimiter } from '../limits/rate-limiter.js';
import type { TierLimitsSource } from '../limits/tier-book.js';
import type { Clock } from '../shared/clock.js';
import type { Account, ApiKey, NanoUsd } from '../domain/records.js';
import type { Model } from '../domain/model-records.js';
import type { AdmissionHold, RequestCharge } from '../billing/settle.js';
import type { RequestMeter } from './request-meter.js';
import { limitsAsk, planOf, type LimitsAsk } from './admission-windows.js';
import type { Span } from '../telemetry/span.js';
import type { Reservation } from '../billing/money-pools.js';
import { projectFundsOf, projectMayUse } from '../projects/project-admission.js';
import { customerAdmission, customerConcurrencyRefusal, customerRateLimitRefusal, withCustomerWindow, type CustomerAdmission } from '../customers/customer-admission.js';
import type { CustomerRuleBook } from '../customers/customer-rule-book.js';

export interface AdmissionDependencies {
  ledger: Ledger;
  limiter: RateLimiter;
  clock: Clock;
  /** Per-account limits by the account's tier, from memory. */
  tiers: TierLimitsSource;
  /** The account's active subscriptions (their quota pays first; their plan's RPM/TPM apply). */
  subscriptions: SubscriptionBook;
  /** The accounts' end-customer rules (their budgets and RPM); absent: none apply. */
  customers?: CustomerRuleBook;
}

export interface AdmissionRequest {
  key: ApiKey;
  account: Account;
  model: Model;
  /** Prompt estimate plus the requested maximum output: what TPM is charged before forwarding. */
  estimatedTokens: number;
  /**
   * Upper bound of what the request can be billed for, for the money reservation. Token endpoints may leave it out
   * (it is then the prompt estimate plus the output cap); images, audio and per-request endpoints give it.
   */
  maxUsage?: BillableUsage;
  /** Models that may answer instead of `model` (its fallback chain): the money held covers the dearest of them all. */
  fallbackModels?: readonly Model[];
  /** Tools the upstream bills per call that the request offers: each is held for at its cap of calls. */
  hostedTools?: HostedToolOffer;
  /** The request's record (read only: the name it used, its prompt estimate, its trace). */
  meter: RequestMeter;
  /** The request counted in rate windows before its body was read (relay/admit-before-body.ts), if it was. */
  early: RequestCharge | null;
  /** The client's protocol family: its own rate-limit headers are added to the generic ones. */
  family: ClientFamily;
  /** A batch's line: charged against the hold its batch made for its whole life (nothing is held for the line itself). */
  holder?: string;
}

/**
 * A priced call of something that is not a model (an MCP tool): its price, held whole before the call from the same
 * funds a model request is paid from, and rate windows and concurrency slots of its own (a tool call is not counted in
 * the key's or account's model RPM). Admitted by the same `admit`, and settled by the same `settle`.
 */
export interface CallAdmissionRequest {
  key: ApiKey;
  account: Account;
  meter: RequestMeter;
  family: ClientFamily;
  call: {
    /** Held before the call, charged after it (0: free). */
    priceNano: NanoUsd;
    /** Windows the call counts 1 in (calls per minute); all or nothing with the slots. */
    windows: readonly LimitRule[];
    slots: readonly ConcurrencySlot[];
    /** Who a full slot belongs to, for the refusal's message ("this API key on server 'x'"). */
    slotOwner: (slot: ConcurrencySlot) => string;
  };
}

/** A call admitted: the money held, its concurrency slot, and the rate-limit headers of its answer. */
export interface CallAdmission extends AdmissionHold {
  readonly rateLimitHeaders: Readonly<Record<string, string>>;
}

/**
 * A request admitted: the model it was admitted for, the money held, the concurrency slot, the token windows charged,
 * and the rate-limit headers of its answer. Never changed after admission; billing/settle.ts settles it once.
 */
export interface Admission extends AdmissionHold {
  readonly model: Model;
  readonly rateLimitHeaders: Readonly<Record<string, string>>;
}

/** What a check before the money hold sees of the request. */
export interface CheckedRequest {
  key: ApiKey;
  account: Account;
  model: Model;
  /** The name the request used for the model (an alias the key's allowlist may name). */
  name: string | null;
}

/**
 * The checks a request must pass before money is held for it, in order, cheapest first; each throws the spec's
 * refusal. A new check is one more line.
 */
const CHECKS_BEFORE_MONEY: ReadonlyArray<(request: CheckedRequest) => void> = [
  ({ key, model, name }) => {
    if (!keyMayUse(key, model, name)) throw modelNotAllowed(model);
  },
];

/**
 * What admission refuses before money is held (CHECKS_BEFORE_MONEY), for a request or for a live session's next
 * response (its key may have changed since the session was admitted).
 */
export function checkBeforeMoney(request: CheckedRequest): void {
  for (const check of CHECKS_BEFORE_MONEY) check(request);
}

/** A concurrency refusal has no window to wait for: this is how soon a slot is worth asking for again. */
const CONCURRENCY_RETRY_SECONDS = 1;

/** The spec's 429 for a refused limit decision: Retry-After and the blocking dimension's X-RateLimit headers. */
export function rateLimitRefusal(decision: Extract<LimitDecision, { allowed: false }>): GatewayError {
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new GatewayError('rate_limit_exceeded', `Rate limit reached (${decision.blocking.rule.dimension}). Retry after ${seconds} s.`, {
    retryAfterSeconds: seconds,
    headers: rateLimitHeaders(decision.blocking),
  });
}

/** The key's model allowlist, which may name the model by its id or by the name (alias) the request used. */
export function keyMayUse(key: ApiKey, model: Model, name: string | null): boolean {
  return (key.allowedModels === null || key.allowedModels.includes(model.id) || (name !== null && key.allowedModels.includes(name))) && projectMayUse(key, model, name);
}

/** The spec's 403 for a model outside the key's allowlist. */
export function modelNotAllowed(model: Model): GatewayError {
  return new GatewayError('model_not_allowed', `This API key is not allowed to use model '${model.id}'.`);
}

/**
 * Everything that must hold before a request reaches an upstream, cheapest first: the key's model allowlist, the
 * money (an upper bound of the cost held from the key's quota cap and budget, the subscription's quota and the
 * wallet, all or nothing; see billing/ledger.ts), then in one limiter call (one Redis script) the key's and the
 * account's concurrency and every rate dimension (key, account, subscription plan, model; all or nothing). Returns the rate-limit headers of the caller's
 * family (limits/rate-limit-headers.ts); throws the spec's error otherwise, after giving back what it took. The money hold usually comes from this instance's lease in
 * memory; when it does not, it waits for one group-committed transaction.
 *
 * A request is admitted in the same turn (a value, not a promise) when every authority holds its answer in memory:
 * the subscription book's settled read, this instance's lease, a limiter whose windows are in this process. Each
 * step that lacks its answer waits for it (a storage read, a group commit, a Redis script) and the same code decides
 * after the wait. A refusal is thrown, or rejects the promise once admission waited.
 */
export function admit(dependencies: AdmissionDependencies, request: AdmissionRequest): Admission | Promise<Admission>;
export function admit(dependencies: AdmissionDependencies, request: CallAdmissionRequest): Promise<CallAdmission>;
export function admit(dependencies: AdmissionDependencies, request: AdmissionRequest | CallAdmissionRequest): Admission | Promise<Admission | CallAdmission> {
  const span = request.meter.observation?.startSpan('admission') ?? null;
  if (span !== null) return admitTraced(span, dependencies, request);
  return 'call' in request ? admitCall(dependencies, request) : admitRequest(dependencies, request);
}

/** `admit` recorded as its trace's span, failed with the refusal's code. */
async function admitTraced(span: Span, dependencies: AdmissionDependencies, request: AdmissionRequest | CallAdmissionRequest): Promise<Admission | CallAdmission> {
  try {
    return await ('call' in request ? admitCall(dependencies, request) : admitRequest(dependencies, request));
  } catch (error) {
    span.fail(error instanceof GatewayError ? error.code : 'internal_error');
    throw error;
  } finally {
    span.end();
  }
}

function admitRequest(dependencies: AdmissionDependencies, request: AdmissionRequest): Admission | Promise<Admission> {
  const { key, account, model, meter } = request;
  checkBeforeMoney({ key, account, model, name: meter.modelId });
  // A request naming an end customer reads the customer's rules too: it takes the path that may wait for them.
  const subscriptions = meter.identity.customer === null ? dependencies.subscriptions.activeNow(account.id) : null;
  if (subscriptions === null) return admitAfterReads(dependencies, request);
  return holdThenLimit(dependencies, request, subscriptions, null);
}

/** Admission once the account's subscriptions and the end customer's rule are read (from storage when not in memory). */
async function admitAfterReads(dependencies: AdmissionDependencies, request: AdmissionRequest): Promise<Admission> {
  const { account, meter } = request;
  const subscriptions = await dependencies.subscriptions.active(account.id);
  const customer = meter.identity.customer === null ? null : await customerAdmission(dependencies.customers, account.id, meter.identity.customer);
  return holdThenLimit(dependencies, request, subscriptions, customer);
}

/** Holds the money for the request (from the lease in this turn, or by the next group commit), then decides its limits. */
function holdThenLimit(dependencies: AdmissionDependencies, request: AdmissionRequest, subscriptions: readonly ActiveSubscription[], customer: CustomerAdmission | null): Admission | Promise<Admission> {
  const { ledger } = dependencies;
  let amountNano = heldFor(request.model, request);
  for (const candidate of request.fallbackModels ?? []) {
    const amount = heldFor(candidate, request);
    if (amount > amountNano) amountNano = amount;
  }
  const ask = moneyAsk(dependencies.tiers, request, subscriptions, customer, amountNano);
  const subscription = subscriptions[0] ?? null;
  const reservation = request.holder === undefined ? ledger.reserveNow(ask) : ledger.chargedAgainst(request.holder, ask);
  if (reservation === null) return limitWhenHeld(dependencies, request, subscription, customer, ledger.reserve(ask));
  return limitOrRelease(dependencies, request, subscription, customer, reservation);
}

async function limitWhenHeld(dependencies: AdmissionDependencies, request: AdmissionRequest, subscription: ActiveSubscription | null, customer: CustomerAdmission | null, held: Promise<Reservation>): Promise<Admission> {
  return limitOrRelease(dependencies, request, subscription, customer, await held);
}

/**
 * The request's limits decided with its money held, in one limiter call (concurrency first: a request refused for it
 * takes nothing from the rate windows): in this turn by a limiter that holds its windows in process, otherwise after
 * its one round trip. Returns the admission, or throws the refusal after giving the hold back.
 */
function limitOrRelease(dependencies: AdmissionDependencies, request: AdmissionRequest, subscription: ActiveSubscription | null, customer: CustomerAdmission | null, reservation: Reservation): Admission | Promise<Admission> {
  const { limiter, clock } = dependencies;
  try {
    const asked = limitsAsk(dependencies, request, subscription, customer);
    const now = clock.now();
    if (asked.slots.length === 0 && asked.charges.length === 0) return admitted(request, customer, reservation, asked, null, now);
    if (limiter.admitNow !== undefined) return admitted(request, customer, reservation, asked, limiter.admitNow(asked, now), now);
    return admittedAfterWait(dependencies, request, customer, reservation, asked, limiter.admit(asked, now), now);
  } catch (error) {
    return releaseAndRethrow(dependencies, request, reservation, error);
  }
}

async function admittedAfterWait(dependencies: AdmissionDependencies, request: AdmissionRequest, customer: CustomerAdmission | null, reservation: Reservation, asked: LimitsAsk, deciding: Promise<AdmissionDecision>, now: number): Promise<Admission> {
  try {
    return admitted(request, customer, reservation, asked, await deciding, now);
  } catch (error) {
    return releaseAndRethrow(dependencies, request, reservation, error);
  }
}

/** Gives back the hold of a request refused after its money was held, and throws the refusal on. */
function releaseAndRethrow(dependencies: AdmissionDependencies, request: AdmissionRequest, reservation: Reservation, error: unknown): never {
  dependencies.ledger.release(reservation, { requestId: request.meter.requestId, createdAt: dependencies.clock.now() });
  throw error;
}

/** What the request's money is asked of: its key's and project's pools, its customer's budget, the account's subscriptions. */
function moneyAsk(tiers: TierLimitsSource, request: Pick<AdmissionRequest, 'key' | 'account' | 'meter'>, subscriptions: readonly ActiveSubscription[], customer: CustomerAdmission | null, amountNano: NanoUsd): ReserveRequest {
  const { key, account, meter } = request;
  const plan = planOf(tiers, key, account);
  return {
    accountId: account.id,
    keyId: key.id,
    keyCapped: plan.keyCapped,
    keyBudgeted: plan.keyBudgeted,
    ...(customer?.budgeted === true ? { customer: customer.customer, customerBudgeted: true } : {}),
    subscriptions: subscriptions.map(({ subscription }) => subscription.id),
    amountNano,
    entryId: newId('led', meter.createdAt),
    project: plan.project,
  };
}

/**
 * The hold of a batch line whose work ran elsewhere (a provider's batch answered it) and is only billed here: nothing
 * is admitted or held for it (no allowlist, limit or concurrency check; the batch was checked when it was created),
 * and its settlement is charged against `holder`, its batch's hold, from the same pools admission would ask.
 */
export async function chargedToHolder(dependencies: AdmissionDependencies, request: Pick<AdmissionRequest, 'key' | 'account' | 'meter'> & { holder: string }): Promise<AdmissionHold> {
  const subscriptions = await dependencies.subscriptions.active(request.account.id);
  const customer = request.meter.identity.customer === null ? null : await customerAdmission(dependencies.customers, request.account.id, request.meter.identity.customer);
  return { reservation: dependencies.ledger.chargedAgainst(request.holder, moneyAsk(dependencies.tiers, request, subscriptions, customer, 0n)), lease: null, tokenCharges: null };
}

/**
 * A priced call: its price held (from the key's cap and budget, the project's, the subscription's quota and the
 * wallet, as any request), then in one limiter call its slots and windows; what was held is given back on refusal.
 */
async function admitCall(dependencies: AdmissionDependencies, request: CallAdmissionRequest): Promise<CallAdmission> {
  const { key, account, meter, call } = request;
  const { ledger, limiter, clock } = dependencies;
  const subscriptions = await dependencies.subscriptions.active(account.id);
  const reservation = await ledger.reserve({
    accountId: account.id,
    keyId: key.id,
    keyCapped: key.quotaNano !== null,
    keyBudgeted: key.budget !== null,
    subscriptions: subscriptions.map(({ subscription }) => subscription.id),
    amountNano: call.priceNano,
    entryId: newId('led', meter.createdAt),
    project: projectFundsOf(key),
  });
  try {
    let lease: ConcurrencyLease | null = null;
    let states: LimitState[] = [];
    const now = clock.now();
    if (call.slots.length > 0 || call.windows.length > 0) {
      const decision = await limiter.admit({ slots: [...call.slots], charges: call.windows.map((window) => ({ rule: window, cost: 1 })) }, now);
      if (!decision.allowed) {
        if (decision.slot === null) throw rateLimitRefusal(decision);
        throw new GatewayError('rate_limit_exceeded', `Too many concurrent calls for ${call.slotOwner(decision.slot)} (limit ${decision.slot.limit}).`, { retryAfterSeconds: CONCURRENCY_RETRY_SECONDS });
      }
      lease = decision.lease;
      states = decision.states;
    }
    const headers = admittedRateLimitHeaders({ states, tokenRules: new Set() }, request.family, now);
    return { reservation, lease, tokenCharges: null, rateLimitHeaders: headers };
  } catch (error) {
    ledger.release(reservation, { requestId: meter.requestId, createdAt: clock.now() });
    throw error;
  }
}

/** The money `model` would hold for the request. */
function heldFor(model: Model, request: AdmissionRequest): NanoUsd {
  return reservationAmount(model.pricing, {
    promptTokens: request.meter.promptTokensEstimate,
    estimatedTokens: request.estimatedTokens,
    maxUsage: request.maxUsage,
    producesText: model.kind === 'chat',
    hostedTools: request.hostedTools,
  });
}

/** The limiter's decision (null: nothing was asked) as the request's admission, or its refusal thrown. */
function admitted(request: AdmissionRequest, customer: CustomerAdmission | null, reservation: Reservation, asked: LimitsAsk, decision: AdmissionDecision | null, now: number): Admission {
  const { key, early } = request;
  let states: LimitState[] = [];
  let lease: ConcurrencyLease | null = null;
  let tokenCharges: Admission['tokenCharges'] = null;
  if (decision !== null) {
    if (!decision.allowed) {
      if (decision.slot === null) throw customerRateLimitRefusal(customer, decision) ?? rateLimitRefusal(decision);
      throw customerConcurrencyRefusal(customer, decision.slot.id, CONCURRENCY_RETRY_SECONDS) ?? concurrencyRefusal(decision.slot, key);
    }
    lease = decision.lease;
    if (asked.tokenCharges.length > 0) tokenCharges = { rules: asked.tokenCharges, chargedAt: now };
    states = decision.states;
  }
  const tokenRules = new Set(asked.tokenCharges.map((charge) => charge.rule.id));
  const rateLimitHeaders = withCustomerWindow(admittedRateLimitHeaders({ states: early === null ? states : [...early.states, ...states], tokenRules }, request.family, now), customer, states);
  return { model: request.model, reservation, lease, tokenCharges, rateLimitHeaders };
}

/** The spec's 429 for a full concurrency slot, the key's or the account's. */
function concurrencyRefusal(slot: ConcurrencySlot, key: ApiKey): GatewayError {
  const whose = slot.id === `key:${key.id}:concurrency` ? 'this API key' : 'this account';
  return new GatewayError('rate_limit_exceeded', `Too many concurrent requests for ${whose} (limit ${slot.limit}).`, { retryAfterSeconds: CONCURRENCY_RETRY_SECONDS });
}
