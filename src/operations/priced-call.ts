import { AnswerPrice, noAttempts, type AnswerReport, type SettledReport } from '../billing/answer-report.js';
import type { ClientFamily } from '../codecs/client-family.js';
import type { Account, ApiKey, NanoUsd } from '../domain/records.js';
import type { McpCallUsage } from '../domain/usage-records.js';
import { toGatewayError } from '../errors/gateway-error.js';
import type { ConcurrencySlot, LimitRule } from '../limits/rate-limiter.js';
import { admit, type CallAdmission } from '../relay/admission.js';
import { RequestMeter } from '../relay/request-meter.js';
import { settleMetered } from './metered-frame.js';
import type { GatewayServices } from '../services.js';
import type { RequestObservation } from '../telemetry/request-observation.js';

/** One priced call that is not a model request (an MCP tool call): who makes it, what it costs, what limits it. */
export interface PricedCall {
  key: ApiKey;
  account: Account;
  /** Unique per call: its usage row's and ledger entry's id. */
  requestId: string;
  /** The access log and trace of the HTTP request the call is, when it is one (an MCP request's own call). */
  observation?: RequestObservation | null;
  protocol: string;
  endpoint: string;
  /** The name its usage row keeps as the model (`<server>__<tool>`, a prompt's or resource's label). */
  name: string;
  /**
   * What the call is (server, tool, bytes), kept by its usage row once it is admitted; `run` completes this same
   * object with what the answer adds (bytes out, the payload where its server logs them).
   */
  mcp: McpCallUsage;
  /** `performance.now()` when the call arrived (its usage row's latency runs from it). */
  startedAt: number;
  family: ClientFamily;
  /** Held before the call, charged once it was answered (null or 0: free). */
  priceNano: NanoUsd | null;
  windows: readonly LimitRule[];
  slots: readonly ConcurrencySlot[];
  slotOwner: (slot: ConcurrencySlot) => string;
}

/** How the call ended: its status and code for the usage row, and whether it is charged its price. */
export interface PricedCallEnding {
  status: number;
  errorCode: string | null;
  charged: boolean;
}

/**
 * The metered frame of a priced call, as `meteredRoute` is of a model request: admit (its price held, its windows
 * and slots taken, all or nothing; a refusal throws the spec's error), run, and settle exactly once however it ends,
 * with a usage row (refused calls too), through the frame's own ending (`settleMetered`). The call's name and `mcp`
 * facts are given to the meter once it is admitted; `run` reports how it ended (and records what its guardrails did on
 * the meter); it throws only for a failure that is not charged.
 */
export async function runPricedCall<T>(
  services: GatewayServices,
  call: PricedCall,
  run: (meter: RequestMeter, admission: CallAdmission) => Promise<{ value: T; ending: PricedCallEnding }>,
): Promise<T> {
  const meter = new RequestMeter(services, call, call.account.id, call.key.id, call.protocol, call.endpoint, call.startedAt);
  const price = call.priceNano ?? 0n;
  let admission: CallAdmission | null = null;
  let report: AnswerReport | null = null;
  try {
    admission = await admit(services, {
      key: call.key,
      account: call.account,
      meter,
      family: call.family,
      call: { priceNano: price, windows: call.windows, slots: call.slots, slotOwner: call.slotOwner },
    });
    meter.named(call.name);
    meter.mcp = call.mcp;
    const { value, ending } = await run(meter, admission);
    report = { status: ending.status, errorCode: ending.errorCode, price: new AnswerPrice(null, null, ending.charged ? price : 0n) };
    return value;
  } catch (error) {
    const failure = toGatewayError(error);
    report = { status: failure.status, errorCode: failure.code, price: new AnswerPrice(null, null, 0n) };
    throw error;
  } finally {
    // A priced call makes no attempt on a channel.
    const ending: SettledReport = { ...(report ?? { status: 500, errorCode: 'internal_error' }), ...noAttempts(call.startedAt) };
    settleMetered(services, meter, admission, null, ending);
  }
}
