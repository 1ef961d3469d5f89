import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { AuditEntry } from '../storage/repositories/operator-repository.js';
import type { CredentialSurface } from './failed-attempt-guard.js';

/** Who the audit log names for what the gateway did by itself. */
export const GATEWAY_ACTOR = { id: 'gateway', email: 'gateway' } as const;

/** The audit log's action for a lockout's start. */
export const LOCKOUT_STARTED_ACTION = 'lockout started';

export interface LockoutReportDependencies {
  clock: Clock;
  logger: Logger;
  /** Appends to the operators' audit log. */
  appendAudit(entry: AuditEntry): Promise<void>;
  /** Counts a started lockout and a refused request in the metrics. */
  countStarted(surface: CredentialSurface): void;
  countRefused(surface: CredentialSurface): void;
  limit: number;
  windowSeconds: number;
  /** Lockout starts written to the log and the audit log per minute at most; the rest are counted in the next one. */
  reportsPerMinute: number;
}

/**
 * Tells operators about lockouts: every start and every refusal in the metrics, and each start as a log line and an
 * audit entry (`lockout started`, target `ip:<address>`, actor `gateway`). An attack from many addresses would
 * flood both, so at most `reportsPerMinute` starts are written a minute per instance; the next written entry says how
 * many were left out (`unreported_before`), and the metrics count them all. With Redis, only the instance whose
 * failure reached the limit reports it.
 */
export class LockoutReport {
  #minute = -1;
  #reportedThisMinute = 0;
  #unreported = 0;

  constructor(private readonly dependencies: LockoutReportDependencies) {}

  started(surface: CredentialSurface, address: string): void {
    const { clock, logger, limit, windowSeconds } = this.dependencies;
    this.dependencies.countStarted(surface);
    const now = clock.now();
    const minute = Math.floor(now / 60_000);
    if (minute !== this.#minute) {
      this.#minute = minute;
      this.#reportedThisMinute = 0;
    }
    if (this.#reportedThisMinute >= this.dependencies.reportsPerMinute) {
      this.#unreported += 1;
      return;
    }
    this.#reportedThisMinute += 1;
    const unreportedBefore = this.#unreported;
    this.#unreported = 0;
    const details = {
      surface, failures: limit, window_seconds: windowSeconds, until: new Date(now + windowSeconds * 1000).toISOString(),
      ...(unreportedBefore > 0 ? { unreported_before: unreportedBefore } : {}),
    };
    logger.warn('failed-credential limit reached: refusing this address until its window ends', { surface, clientIp: address, limit, windowSeconds, ...(unreportedBefore > 0 ? { unreportedBefore } : {}) });
    this.dependencies.appendAudit({
      id: newId('aud', now), at: now, operatorId: GATEWAY_ACTOR.id, operatorEmail: GATEWAY_ACTOR.email, action: LOCKOUT_STARTED_ACTION,
      target: `ip:${address}`, status: 429, before: null, after: JSON.stringify(details), ip: address,
    }).catch((error: unknown) => logger.warn('lockout not written to the audit log', describeError(error)));
  }

  refused(surface: CredentialSurface): void {
    this.dependencies.countRefused(surface);
  }
}
