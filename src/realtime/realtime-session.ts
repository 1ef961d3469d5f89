import type WebSocket from 'ws';
import type { RawData } from 'ws';
import type { Logger } from '../shared/logger.js';
import { describeError } from '../shared/logger.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { Usage } from '../ir/usage.js';
import type { RealtimeBilling } from './realtime-billing.js';
import type { RealtimeDialect } from './realtime-dialect.js';
import { CLOSE, type RealtimeErrorDetail } from './realtime-events.js';
import { frameBuffer, type FrameTranslator, type Translated } from './translation/frame-translator.js';

export interface RealtimeSessionLimits {
  idleMs: number;
  maxSessionMs: number;
  pingMs: number;
  /** Bytes queued toward one side before reading from the other side pauses. */
  bufferBytes: number;
}

/** After the caller leaves mid-response, how long the upstream is kept to report what the cut response used. */
const CUT_REPORT_MS = 2000;
/** How often a paused side is checked for the other side's queue having drained. */
const BACKPRESSURE_POLL_MS = 20;
/** A close handshake not answered in this time ends the connection without one. */
const CLOSE_GRACE_MS = 3000;

/** Close codes a peer may not send (reserved for reporting); a session cut that way is closed as an internal error. */
function sendableCode(code: number): number {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999) ? code : CLOSE.internal;
}

/**
 * The error event of a refusal before a response: the caller's own standing (401, 403: a revoked key, a model no
 * longer allowed…) typed as the HTTP answer types it, a refusal of money or of a window as `invalid_request_error`.
 */
function refusalDetail(refusal: GatewayError): RealtimeErrorDetail {
  const type = refusal.status === 401 || refusal.status === 403 ? refusal.type : 'invalid_request_error';
  return { type, code: refusal.code, message: `${refusal.message} The session was ended before its next response.` };
}

/**
 * One proxied realtime session between a caller's socket and its channel's upstream socket: frames pass through
 * unchanged both ways; each finished response (as the dialect reads it: OpenAI's `response.done`, Gemini's
 * `usageMetadata`) is billed as it passes (RealtimeBilling) and money is held for the next response before the
 * caller's next frame goes upstream, and every caller frame waits for the caller to be checked again as a request
 * would be (its key revoked meanwhile…); when that hold or check is refused the session ends in the protocol's own
 * way (OpenAI's `error` event, Gemini's close reason) with close code 1008. The transport is bounded: an idle session and one past its maximum
 * duration are closed, both sides are pinged, and a side that reads slower than the other writes pauses the other
 * (at most `bufferBytes` queued per direction, plus one frame). With a translator (the caller and the upstream speak
 * different protocols) every frame is translated instead of passed, and frames the translation sends upstream on its
 * own wait for the money hold like the caller's; billing still reads the upstream's frames.
 */
export class RealtimeSession {
  #lastActivity = performance.now();
  #responseStartedAt: number | null = null;
  /**
   * Caller frames waiting while a check runs (the caller's standing, the next response's money hold) before they may go
   * upstream (`translated`: already in the upstream's protocol).
   */
  #held: Array<{ data: RawData; binary: boolean; translated?: boolean }> | null = null;
  /** The checks running that `#held` waits for. */
  #checks = 0;
  #ending = false;
  /** The session ended mid-response: its upstream is kept (at most CUT_REPORT_MS) for the cut response's report. */
  #awaitingCutReport = false;
  #finished = false;
  #draining = false;
  /** The session's fixed timers (pings, maximum duration) and those started once (drain, cut report). */
  readonly #timers: NodeJS.Timeout[] = [];
  #idleTimer: NodeJS.Timeout | null = null;
  /** The backpressure checks running (at most one per paused side). */
  readonly #polls = new Set<NodeJS.Timeout>();
  readonly #alive = new Map<WebSocket, boolean>();
  readonly #pausedForBackpressure = new Set<WebSocket>();
  readonly #startedAt = performance.now();

  constructor(
    private readonly client: WebSocket,
    private readonly upstream: WebSocket,
    private readonly billing: RealtimeBilling,
    private readonly dialect: RealtimeDialect,
    private readonly limits: RealtimeSessionLimits,
    private readonly logger: Logger,
    private readonly onFinished: (session: RealtimeSession) => void,
    /** Set when the caller and the upstream speak different protocols: every frame is translated, else passed unchanged. */
    private readonly translator: FrameTranslator | null = null,
  ) {}

  /**
   * Starts relaying: `opening` events go upstream first, then `early` (what the upstream sent before the caller's
   * handshake completed) goes to the caller.
   */
  start(early: ReadonlyArray<{ data: RawData; binary: boolean }>, opening: readonly string[] = []): void {
    for (const event of opening) this.upstream.send(event);
    if (this.translator !== null) this.#applyTranslated(this.translator.start());
    this.client.on('message', (data, binary) => this.#fromClient(data, binary));
    this.upstream.removeAllListeners('message');
    for (const frame of early) this.#fromUpstream(frame.data, frame.binary);
    this.upstream.on('message', (data, binary) => this.#fromUpstream(data, binary));
    this.upstream.resume();
    if (this.upstream.readyState === this.upstream.CLOSED) this.#upstreamClosed(CLOSE.internal);
    this.client.on('close', (code) => this.#clientClosed(code));
    this.upstream.on('close', (code, reason) => this.#upstreamClosed(code, reason.toString('utf8')));
    for (const socket of [this.client, this.upstream]) {
      socket.on('error', (error) => this.logger.debug('realtime socket error', describeError(error)));
      this.#alive.set(socket, true);
      socket.on('pong', () => this.#alive.set(socket, true));
    }
    this.#timers.push(setInterval(() => this.#ping(), this.limits.pingMs));
    this.#timers.push(setTimeout(() => this.endWith(CLOSE.normal, 'session expired', {
      type: 'invalid_request_error',
      code: 'session_expired',
      message: `Your session hit the maximum duration of ${Math.round(this.limits.maxSessionMs / 1000)} seconds.`,
    }), this.limits.maxSessionMs));
    this.#armIdle(this.limits.idleMs);
  }

  /**
   * The instance is draining: the caller hears of it (Gemini's `goAway`), and the session ends once the response in
   * progress is done (billed), at the latest at `deadlineMs` from now, in the protocol's way with close code 1001.
   */
  drain(deadlineMs: number): void {
    if (!this.#draining && !this.#ending && this.client.readyState === this.client.OPEN) {
      const notice = this.dialect.drainNotice(deadlineMs);
      if (notice !== null) this.client.send(notice);
    }
    this.#draining = true;
    const end = (): void => this.endWith(CLOSE.goingAway, 'gateway restarting', { type: 'server_error', code: 'server_shutting_down', message: 'This gateway instance is restarting; reconnect to continue the conversation.' });
    if (this.#responseStartedAt === null) end();
    else this.#timers.push(setTimeout(end, Math.max(0, deadlineMs)));
  }

  /** Ends the session: the protocol's error event (if it has one) goes to the caller, then both sides are closed. */
  endWith(code: number, reason: string, error: RealtimeErrorDetail | null): void {
    if (this.#ending) return;
    this.#ending = true;
    const frame = error === null ? null : this.dialect.errorFrame(error);
    if (frame !== null && this.client.readyState === this.client.OPEN) this.client.send(frame);
    this.#close(this.client, code, error === null ? reason : this.dialect.closeReason(error, reason));
    this.#releaseUpstream();
  }

  /**
   * The upstream of a session that is ending: with a response being written, the upstream is asked to stop it (where
   * its protocol can) and kept up to CUT_REPORT_MS for what the response used, which is billed as it arrives (then the
   * upstream is closed); otherwise it is closed now.
   */
  #releaseUpstream(): void {
    if (this.#responseStartedAt !== null && this.upstream.readyState === this.upstream.OPEN) {
      this.#awaitingCutReport = true;
      const cancel = this.dialect.cancelFrame();
      if (cancel !== null) this.upstream.send(cancel);
      this.#timers.push(setTimeout(() => this.#close(this.upstream, CLOSE.normal, ''), CUT_REPORT_MS));
      return;
    }
    this.#close(this.upstream, CLOSE.normal, '');
  }

  /**
   * A caller frame goes upstream once the caller is checked again (a key revoked since the previous frame stops here,
   * before anything it asks for reaches the upstream); frames that arrive while a check runs wait for it. Nothing the
   * caller sends goes upstream once the session is ending.
   */
  #fromClient(data: RawData, binary: boolean): void {
    this.#lastActivity = performance.now();
    if (this.#ending) return;
    if (this.#held !== null) {
      this.#held.push({ data, binary });
      this.client.pause();
      return;
    }
    this.#held = [{ data, binary }];
    this.#afterCheck(this.billing.standing(), 'The gateway could not check the API key.');
  }

  /**
   * Caller frames wait (in `#held`) until `check` passes and then go upstream in order; a refusal ends the session in
   * the protocol's way with close code 1008 and the frames are dropped.
   */
  #afterCheck(check: Promise<GatewayError | null>, failure: string): void {
    this.#held ??= [];
    this.client.pause();
    this.#checks += 1;
    void check.then((refusal) => {
      this.#checks -= 1;
      if (this.#ending) return;
      if (refusal !== null) {
        this.#held = null;
        this.endWith(CLOSE.policy, refusal.code, refusalDetail(refusal));
        // The caller's answer to the close must be read (its frames go nowhere now).
        this.client.resume();
        return;
      }
      if (this.#checks > 0) return;
      const held = this.#held ?? [];
      this.#held = null;
      for (const frame of held) {
        if (frame.translated === true) this.#forward(this.upstream, this.client, frame.data, frame.binary);
        else this.#toUpstream(frame.data, frame.binary);
      }
      if (!this.#pausedForBackpressure.has(this.client)) this.client.resume();
    }, (error: unknown) => {
      this.#checks -= 1;
      this.#held = null;
      this.logger.error('realtime check failed', describeError(error));
      this.endWith(CLOSE.internal, 'internal error', { type: 'server_error', code: 'internal_error', message: failure });
      this.client.resume();
    });
  }

  /** A caller frame goes upstream: as it is, or translated into the upstream's protocol. */
  #toUpstream(data: RawData, binary: boolean): void {
    if (this.translator === null) this.#forward(this.upstream, this.client, data, binary);
    else this.#applyTranslated(this.translator.fromClient(frameBuffer(data)));
  }

  /** Sends what a translation produced: to the caller, upstream (held like the caller's frames while money is held), or ends the session. */
  #applyTranslated(translated: Translated): void {
    this.#toClientTranslated(translated);
    this.#toUpstreamTranslated(translated.toUpstream);
    if (translated.end !== undefined) this.endWith(translated.end.code, translated.end.reason, null);
  }

  #toClientTranslated(translated: Translated): void {
    if (this.client.readyState !== this.client.OPEN) return;
    const binary = this.translator?.clientBinary === true;
    for (const frame of translated.toClient) this.#forward(this.client, this.upstream, binary ? Buffer.from(frame) : frame, binary);
  }

  #toUpstreamTranslated(frames: readonly string[]): void {
    for (const frame of frames) {
      if (this.#held !== null) this.#held.push({ data: Buffer.from(frame), binary: false, translated: true });
      else this.#forward(this.upstream, this.client, frame, false);
    }
  }

  #fromUpstream(data: RawData, binary: boolean): void {
    this.#lastActivity = performance.now();
    if (this.#finished) return;
    const event = this.dialect.watch(data, binary);
    if (event?.kind === 'response-started') this.#responseStartedAt ??= performance.now();
    if (this.translator === null) {
      if (this.client.readyState === this.client.OPEN) this.#forward(this.client, this.upstream, data, binary);
      if (event?.kind === 'response-done') this.#responseDone(event.status, event.usage);
      return;
    }
    const translated = this.translator.fromUpstream(frameBuffer(data));
    this.#toClientTranslated(translated);
    // The response is billed and the next one's money held before anything the translation sends upstream goes.
    if (event?.kind === 'response-done') this.#responseDone(event.status, event.usage);
    this.#toUpstreamTranslated(translated.toUpstream);
    if (translated.end !== undefined) this.endWith(translated.end.code, translated.end.reason, null);
  }

  #responseDone(status: string, usage: Usage | null): void {
    const startedAt = this.#responseStartedAt ?? performance.now();
    this.#responseStartedAt = null;
    try {
      this.billing.chargeResponse(usage, status, startedAt);
    } catch (error) {
      this.logger.error('realtime response could not be billed', describeError(error));
    }
    if (this.#ending || this.client.readyState !== this.client.OPEN) {
      this.#close(this.upstream, CLOSE.normal, '');
      return;
    }
    if (this.#draining) {
      this.drain(0);
      return;
    }
    this.#afterCheck(this.billing.holdNext(), 'The gateway could not hold money for the next response.');
  }

  /** Sends `data` to `to`; when `to` has more than `bufferBytes` queued, `from` stops being read until it drains. */
  #forward(to: WebSocket, from: WebSocket, data: RawData | string, binary: boolean): void {
    if (to.readyState !== to.OPEN) return;
    to.send(data, { binary });
    if (to.bufferedAmount <= this.limits.bufferBytes || this.#pausedForBackpressure.has(from)) return;
    this.#pausedForBackpressure.add(from);
    from.pause();
    const poll = setInterval(() => {
      if (to.readyState !== to.OPEN || to.bufferedAmount <= this.limits.bufferBytes / 2) {
        clearInterval(poll);
        this.#polls.delete(poll);
        this.#pausedForBackpressure.delete(from);
        if (!(from === this.client && this.#held !== null)) from.resume();
      }
    }, BACKPRESSURE_POLL_MS);
    this.#polls.add(poll);
  }

  #clientClosed(code: number): void {
    // The upstream is being kept for a cut response's report: it closes when that arrives or its time is up.
    if (this.#awaitingCutReport) return;
    if (!this.#ending && this.#responseStartedAt !== null && this.upstream.readyState === this.upstream.OPEN) {
      // A response being written is cut: the upstream still reports what it used, and that is billed.
      this.#ending = true;
      this.#releaseUpstream();
      return;
    }
    this.#ending = true;
    this.#close(this.upstream, sendableCode(code), '');
    if (this.upstream.readyState === this.upstream.CLOSED) this.#finish();
  }

  /** The upstream ended the session: the caller gets its code and reason (Gemini's only word on why). */
  #upstreamClosed(code: number, reason = ''): void {
    this.#close(this.client, sendableCode(code), code === 1006 ? 'upstream connection lost' : reason);
    this.#finish();
  }

  #close(socket: WebSocket, code: number, reason: string): void {
    if (socket.readyState === socket.CLOSED) return;
    if (socket.readyState === socket.CLOSING) return;
    socket.close(code, reason);
    const grace = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
    grace.unref();
    socket.once('close', () => clearTimeout(grace));
  }

  #ping(): void {
    for (const socket of [this.client, this.upstream]) {
      if (socket.readyState !== socket.OPEN) continue;
      if (this.#alive.get(socket) === false) {
        socket.terminate();
        continue;
      }
      this.#alive.set(socket, false);
      socket.ping();
    }
  }

  #armIdle(afterMs: number): void {
    this.#idleTimer = null;
    const timer = setTimeout(() => {
      const idleFor = performance.now() - this.#lastActivity;
      if (idleFor < this.limits.idleMs) {
        this.#armIdle(this.limits.idleMs - idleFor);
        return;
      }
      this.endWith(CLOSE.normal, 'idle timeout', { type: 'invalid_request_error', code: 'session_idle_timeout', message: `The session was idle for ${Math.round(this.limits.idleMs / 1000)} seconds and was closed.` });
    }, Math.max(1, afterMs));
    this.#idleTimer = timer;
  }

  /** Both sides are done: the money held for a next response goes back and the concurrency slot is released. */
  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    for (const timer of [...this.#timers, ...this.#polls]) clearTimeout(timer);
    this.#polls.clear();
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer);
    this.#close(this.client, CLOSE.normal, '');
    this.billing.end(this.#startedAt, null);
    this.onFinished(this);
  }
}
