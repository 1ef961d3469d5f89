import type { Usage } from '../ir/usage.js';
import { madeHostedToolCalls, totalTokens } from '../ir/usage.js';
import type { ConcurrencyLease, LimitRule, LimitState, RateLimiter } from '../limits/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { GuardrailUsage, McpCallUsage, UsageLogRow } from '../domain/usage-records.js';
import type { NanoUsd } from '../domain/records.js';
import type { UsageLogWriter } from '../usage-log/usage-log-writer.js';
import { AnswerPrice, type AnswerProgress, type Billed, type SettledReport, type TokenCharges } from './answer-report.js';
import type { Ledger } from './ledger.js';
import type { Reservation } from './money-pools.js';

/** Usage-row code of a stream charged at its last checkpoint because its instance stopped (crash, SIGKILL). */
export const INSTANCE_STOPPED = 'instance_stopped';

export interface SettleDependencies {
  ledger: Ledger;
  usageLog: UsageLogWriter;
  limiter: RateLimiter;
  clock: Clock;
  logger: Logger;
}

/**
 * One request counted in rate windows before its body was read (relay/admit-before-body.ts): it stands once
 * admission takes the request, and is given back when the request settles otherwise (a request refused or failed
 * before admission is not counted, as when all limits are checked at admission).
 */
export interface RequestCharge {
  rules: readonly LimitRule[];
  /** The windows as the early check left them, for the X-RateLimit headers. */
  states: readonly LimitState[];
  chargedAt: number;
}

/** What admission took for a request and its settlement gives back or charges: money, a concurrency slot, token windows. */
export interface AdmissionHold {
  /** The money held, settled to the real cost. */
  readonly reservation: Reservation;
  /** The concurrency slot, released however the request ends. */
  readonly lease: ConcurrencyLease | null;
  /** Admission's token-window charges (null: none). */
  readonly tokenCharges: TokenCharges | null;
}

/** What the request itself was, for its usage row (the meter's record of it). */
export interface SettledRequest {
  readonly requestId: string;
  readonly accountId: string;
  readonly keyId: string;
  readonly protocol: string;
  readonly endpoint: string;
  readonly stream: boolean;
  /** The model name the request gave (the usage row keeps the fallback chain's last instead, when it tried one). */
  readonly modelId: string | null;
  /** Clock time the request was metered from (the usage row's time, the ledger entry id's time). */
  readonly createdAt: number;
  /** The end customer and tags the request named, kept on its usage row (both null: none). */
  readonly identity: Pick<UsageLogRow, 'customer' | 'tags'>;
  /** What the request's guardrail policies did; empty: none ran. */
  readonly guardrails?: readonly GuardrailUsage[];
  /** The MCP tool call the request was (server, tool, bytes; never arguments unless its server logs them). */
  readonly mcp?: McpCallUsage | null;
}

/** What a request was settled at: its cost, the usage billed and the usage row written. */
export interface Settlement {
  costNano: NanoUsd;
  usage: Usage | null;
  row: UsageLogRow;
  /** Whether money was held for it (its settlement moved a reservation). */
  reserved: boolean;
}

/**
 * Settles one request, exactly once, from what admission took (null when it was refused or never reached) and how its
 * answer ended: the charge at the report's price (the reservation settled to it, 0 releasing it; a charge with
 * nothing reserved settles on its own), the token windows corrected to the real usage, the early request count given
 * back when the request was not admitted, the concurrency slot released, and one metadata-only usage row (carried by
 * the settlement, so it waits on disk with it while the database is away).
 */
export function settle(
  dependencies: SettleDependencies,
  request: SettledRequest,
  admission: AdmissionHold | null,
  early: RequestCharge | null,
  report: SettledReport,
): Settlement {
  const { ledger, usageLog, limiter, clock, logger } = dependencies;
  admission?.lease?.release();
  const usage = report.usage ?? null;
  const price = report.price ?? new AnswerPrice(null);
  const cost = price.quote(report);
  correctTokenCharges(dependencies, admission?.tokenCharges ?? null, report.attempts.tokenCharges, usage);
  if (early !== null && admission === null) {
    for (const rule of early.rules) limiter.adjust(rule, -1, early.chargedAt).catch((error: unknown) => logger.warn('request limit refund failed', describeError(error)));
  }
  // Exactly one settlement per request: the reservation's (0 releases it), or a charge with nothing reserved.
  const reservation = admission?.reservation ?? (cost > 0n ? ledger.unreserved(request.accountId, request.keyId, newId('led', request.createdAt)) : null);
  // A stream checkpointed by the ledger stops being so; one whose checkpoint reached storage has it deleted. With no
  // stream tracked, this request was not one.
  const checkpointed = ledger.checkpoints.size === 0 ? false : ledger.checkpoints.finish(request.requestId);
  const row = usageRow(request, report, price, usage, cost);
  // The settlement's transaction writes the row where it can (PostgreSQL); otherwise the usage log does.
  const rowSettled = reservation !== null && ledger.settle(reservation, { costNano: cost, requestId: request.requestId, createdAt: clock.now(), checkpointed, usageRow: row });
  if (!rowSettled) usageLog.record(row);
  return { costNano: cost, usage, row, reserved: reservation !== null };
}

/** Token windows charged by estimate, corrected by the real usage (charges taken at admission's moment when it took any). */
function correctTokenCharges(dependencies: SettleDependencies, admitted: TokenCharges | null, attempt: TokenCharges | null, usage: Usage | null): void {
  if (admitted === null && attempt === null) return;
  const { limiter, logger } = dependencies;
  const chargedAt = (admitted ?? attempt as TokenCharges).chargedAt;
  const actual = usage === null ? 0 : totalTokens(usage);
  for (const { rule, charged } of [...(admitted?.rules ?? []), ...(attempt?.rules ?? [])]) {
    if (actual === charged) continue;
    // In this turn where the limiter holds its windows in process; otherwise sent, and logged if that fails.
    if (limiter.adjustNow !== undefined) limiter.adjustNow(rule, actual - charged, chargedAt);
    else limiter.adjust(rule, actual - charged, chargedAt).catch((error: unknown) => logger.warn('token limit correction failed', describeError(error)));
  }
}

/**
 * A stream in flight, with what it would be billed if it stopped now (`billed`, computed only when the ledger asks,
 * never per event): its first checkpoint is written as its first byte reaches the caller (the upstream bills the input
 * from then on), then every few seconds, so if this instance dies the stream is charged at it (with a usage row coded
 * `instance_stopped`) instead of its hold being released. `opening`: what it is billed at its first byte when that is
 * cheaper to tell than `billed` (a chat stream's input, no tokenizer run). `requestNow`: the request's facts as they
 * are when a checkpoint is written, and `progress` its answer's attempts and timings then (they go on after tracking
 * starts).
 */
export function trackStream(
  ledger: Ledger,
  requestNow: () => SettledRequest,
  progress: () => AnswerProgress,
  reservation: Reservation,
  price: AnswerPrice,
  billed: () => Promise<Billed>,
  opening?: () => Billed,
): void {
  const figureOf = (current: Billed) => {
    const costNano = price.quote(current);
    return { costNano, row: usageRow(requestNow(), { status: 502, errorCode: INSTANCE_STOPPED, ...progress() }, price, current.usage ?? null, costNano) };
  };
  const request = requestNow();
  ledger.checkpoints.track(
    request.requestId,
    reservation,
    async () => figureOf(await billed()),
    opening === undefined ? null : () => Promise.resolve(figureOf(opening())),
  );
  if (progress().timings.ttfbMs !== null) ledger.checkpointFirstByte(request.requestId);
}

function usageRow(request: SettledRequest, outcome: Pick<SettledReport, 'status' | 'errorCode' | 'attempts' | 'timings'>, price: AnswerPrice, usage: Usage | null, cost: NanoUsd): UsageLogRow {
  const { attempts, timings } = outcome;
  return {
    requestId: request.requestId,
    accountId: request.accountId,
    keyId: request.keyId,
    model: attempts.modelName ?? request.modelId,
    channelId: attempts.channels.at(-1) ?? null,
    protocol: request.protocol,
    endpoint: request.endpoint,
    stream: request.stream,
    status: outcome.status,
    errorCode: outcome.errorCode ?? null,
    promptTokens: usage?.input.total ?? 0,
    completionTokens: usage?.output.total ?? 0,
    cachedTokens: usage?.input.cacheRead ?? 0,
    reasoningTokens: usage?.output.reasoning ?? 0,
    totalTokens: usage === null ? 0 : totalTokens(usage),
    costNano: cost,
    latencyMs: timings.totalMs,
    ttfbMs: timings.ttfbMs,
    attempts: attempts.channels.length,
    attemptedChannels: attempts.channels as string[],
    createdAt: request.createdAt,
    cacheHit: price.cacheHit,
    ...(madeHostedToolCalls(usage?.hostedTools) ? { hostedTools: usage.hostedTools, hostedToolCostNano: price.hostedToolQuote(usage) } : {}),
    ...(request.identity.customer == null && request.identity.tags == null ? {} : { customer: request.identity.customer, tags: request.identity.tags }),
    ...(request.guardrails === undefined || request.guardrails.length === 0 ? {} : { guardrails: request.guardrails }),
    ...(request.mcp == null ? {} : { mcp: request.mcp }),
  };
}

/**
 * Starts a stream's checkpoints, billed at `price` (see `trackStream`); the metered frame gives it to the relays. Does
 * nothing for a request that holds no money or is settled already.
 */
export type CheckpointStream = (price: AnswerPrice, billed: () => Promise<Billed>, opening?: () => Billed) => void;
