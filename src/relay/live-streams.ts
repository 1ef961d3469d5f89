import { budgetSpentAt } from '../domain/budget-period.js';
import type { Account, ApiKey } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Invalidation, InvalidationBus } from '../invalidation/invalidation-bus.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { Storage } from '../storage/storage.js';
import { CallerGone, type CallerSignal } from './caller-signal.js';

/** A streamed answer in flight that can be ended from outside. */
interface LiveStream {
  readonly keyId: string;
  readonly accountId: string;
  stop(reason: GatewayError): void;
}

/**
 * Why a stream of `key` may not go on, or null: the refusals a new request with the key gets (revoked, expired,
 * disabled, its account disabled or deleted), and a quota cap or budget that a change left at or below what the key
 * has spent. A stream in flight holds the money it may cost, so spending elsewhere never stops it; a change does.
 */
export function streamStopReason(key: ApiKey | null, account: Account | null, now: number): GatewayError | null {
  if (key === null || key.status === 'revoked' || account === null || account.status === 'deleted') {
    return new GatewayError('revoked_api_key', 'The API key was revoked while this answer was streaming.');
  }
  if (key.expiresAt !== null && key.expiresAt <= now) return new GatewayError('expired_api_key', 'The API key expired while this answer was streaming.');
  if (key.status === 'disabled') return new GatewayError('key_disabled', 'The API key was disabled while this answer was streaming.');
  if (account.status === 'disabled') return new GatewayError('account_disabled', 'The account was disabled while this answer was streaming. Contact the operator of this gateway.');
  if (key.quotaNano !== null && key.spentNano >= key.quotaNano) return new GatewayError('quota_exhausted', 'The API key\'s quota was used up while this answer was streaming.');
  if (key.budget !== null && budgetSpentAt(key.budget, now) >= key.budget.limitNano) {
    return new GatewayError('quota_exhausted', 'The API key\'s budget for this period was used up while this answer was streaming.');
  }
  return null;
}

/**
 * The chat streams in flight in this process, by key and by account. When the invalidation bus says a key or an
 * account changed (here or on any instance), the key is read again, once per change and only when it has a stream
 * here; if a new request with it would now be refused, its streams end at once with their family's error event,
 * billed for what they delivered. Nothing is read per chunk or per request: a stream costs two map entries.
 */
export class LiveStreams {
  readonly #byKey = new Map<string, Set<LiveStream>>();

  constructor(
    private readonly storage: Pick<Storage, 'keys' | 'accounts'>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    bus: InvalidationBus,
  ) {
    bus.subscribe((message) => this.#follow(message));
  }

  /** How many streams are open (tests and metrics). */
  get size(): number {
    let count = 0;
    for (const streams of this.#byKey.values()) count += streams.size;
    return count;
  }

  /**
   * Registers a streamed request from its start (a change while the upstream has yet to answer stops it too); `stop`
   * runs at most once. Returns its removal, for when the request ends.
   */
  open(keyId: string, accountId: string, stop: (reason: GatewayError) => void): () => void {
    let stopped = false;
    const stream: LiveStream = {
      keyId,
      accountId,
      stop(reason) {
        if (stopped) return;
        stopped = true;
        stop(reason);
      },
    };
    let streams = this.#byKey.get(keyId);
    if (streams === undefined) this.#byKey.set(keyId, (streams = new Set()));
    streams.add(stream);
    return () => {
      const current = this.#byKey.get(keyId);
      if (current === undefined) return;
      current.delete(stream);
      if (current.size === 0) this.#byKey.delete(keyId);
    };
  }

  #follow(message: Invalidation): Promise<void> | undefined {
    switch (message.kind) {
      case 'key':
        return this.#byKey.has(message.id) ? this.#check([message.id]) : undefined;
      case 'account': {
        const keys = [...this.#byKey].filter(([, streams]) => [...streams].some((stream) => stream.accountId === message.id)).map(([keyId]) => keyId);
        return keys.length === 0 ? undefined : this.#check(keys);
      }
      case 'all':
        return this.#byKey.size === 0 ? undefined : this.#check([...this.#byKey.keys()]);
      case 'tier':
      case 'catalog':
      case 'customers':
      case 'guardrails':
        return undefined;
      default: {
        const unknown: never = message;
        throw new Error(`unhandled invalidation ${String(unknown)}`);
      }
    }
  }

  async #check(keyIds: string[]): Promise<void> {
    for (const keyId of keyIds) {
      try {
        const key = await this.storage.keys.getById(keyId);
        const account = key === null ? null : await this.storage.accounts.getById(key.accountId);
        const reason = streamStopReason(key, account, this.clock.now());
        if (reason === null) continue;
        const streams = [...(this.#byKey.get(keyId) ?? [])];
        this.#byKey.delete(keyId);
        for (const stream of streams) stream.stop(reason);
        if (streams.length > 0) this.logger.info('streams ended by a change of their key or account', { key: keyId, streams: streams.length, code: reason.code });
      } catch (error) {
        // Storage unreachable: the streams run on (a new request with the key is refused by its own check).
        this.logger.warn('could not check the streams of a changed key', { key: keyId, ...describeError(error) });
      }
    }
  }
}

/**
 * One streamed chat request as the relay follows it: registered from the start, so a change that comes while the
 * upstream has yet to answer stops it too. Once stopped, `reason` is the caller's error and the upstream call is
 * aborted (through `signalFor`); the relay then ends the caller's stream with that error.
 */
export class StreamStop {
  reason: GatewayError | null = null;
  readonly #aborted = new CallerGone();
  readonly #close: () => void;
  #followed: CallerSignal | null = null;
  readonly #forward = (): void => this.#aborted.abort(this.#followed?.reason);

  constructor(streams: LiveStreams, keyId: string, accountId: string) {
    this.#close = streams.open(keyId, accountId, (reason) => {
      this.reason = reason;
      this.#aborted.abort(reason);
    });
  }

  /** The signal for the upstream call: aborted when the caller leaves (`caller`) or the stream is stopped. */
  signalFor(caller: CallerSignal): CallerSignal {
    if (this.#followed !== caller) {
      this.#followed?.removeEventListener('abort', this.#forward);
      this.#followed = caller;
      if (caller.aborted) this.#forward();
      else caller.addEventListener('abort', this.#forward);
    }
    return this.#aborted;
  }

  close(): void {
    this.#followed?.removeEventListener('abort', this.#forward);
    this.#close();
  }
}
