import { randomUUID } from 'node:crypto';
import { keyRefusalOf } from '../auth/key-verifier.js';
import type { ClientFamily } from '../codecs/client-family.js';
import { batchHolder } from '../billing/money-pools.js';
import { ENDED_BATCH_STATUSES, GEMINI_BATCH_ENDPOINT, HOLDER_PREFIX, OPENAI_BATCH_ENDPOINTS, type Batch, type BatchEndpoint, type ClaimedLine, type LineOutcome } from '../domain/batches.js';
import type { StoredFile } from '../domain/files.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RouteHandler } from '../http/request-context.js';
import { geminiFileResultLine } from '../http/routes/gemini-batch-wire.js';
import type { GatewayServices } from '../services.js';
import { describeError } from '../shared/logger.js';
import { newId } from '../shared/ids.js';
import { BackgroundJob } from '../shared/background-job.js';
import { batchResultFiles } from './batch-results.js';
import { keepFile } from './keep-file.js';
import { outcomeOf } from './line-outcome.js';
import { lineTarget, runLineRequest } from './line-request.js';

/** A batch endpoint's route, as the API serves it. */
export interface BatchRoute {
  handler: RouteHandler;
  family: ClientFamily;
}

/** How long result files of a batch are kept when the batch did not say (thirty days, as batch input files). */
export const OUTPUT_DEFAULT_EXPIRY_SECONDS = 30 * 86_400;
/** Expired files removed per sweep. */
const SWEEP_LIMIT = 100;
/** How often expired files and uploads are removed while none are found. */
const FILE_SWEEP_MS = 10 * 60_000;
/** How often holds of ended or never-queued batches are looked for. */
const HOLD_SWEEP_MS = 30_000;
/** A hold with no batch is left this long (the batch may be being queued right now) before it is released. */
const ORPHAN_HOLD_GRACE_MS = 10 * 60_000;

/** A line's request id: the same each time the line is taken up, so its usage row and charge are found again. */
export const lineRequestId = (batchId: string, line: number): string => `req_${batchId}_${line}`;

/**
 * Runs the batches of every account from their durable queue: each instance leases at most `concurrency` lines at a
 * time (so batches never crowd out interactive requests), runs each through the API's own route in process (any
 * model, translated as any request is, admitted and settled once like any request, at batch prices), and records its
 * outcome while it still holds the lease. A line whose instance stopped is taken over once its lease runs out;
 * if its usage row shows it was run and charged, it is not run again. Batches whose lines are all settled get
 * their output and error files; expired files are removed.
 */
export class BatchRunner {
  readonly #owner: string;
  readonly #running = new Set<Promise<void>>();
  readonly #job = new BackgroundJob(() => this.#tick());
  #closed = false;
  #linesRun = 0;
  #holdsSweptAt = 0;
  #filesSweptAt = 0;
  #filesFound = false;

  constructor(
    private readonly services: GatewayServices,
    private readonly routes: ReadonlyMap<BatchEndpoint, BatchRoute>,
  ) {
    this.#owner = `${services.ledger.instanceId}:${randomUUID().slice(0, 8)}`;
  }

  /** Lines this instance has run since it started (for the operator's throughput figure). */
  get linesRun(): number {
    return this.#linesRun;
  }

  get inFlight(): number {
    return this.#running.size;
  }

  /**
   * Passes over the queue every BATCH_POLL_MS while there is work (and while lines run here, whose leases each pass
   * renews), less often while there is none, up to the idle maximum; at once when a batch is created in this process.
   */
  start(): void {
    if (this.#closed) return;
    this.#job.start({
      name: 'batches', baseMs: this.services.config.batches.pollMs, logger: this.services.logger,
      found: (found) => found, wakeOn: { kind: 'batches', how: 'nudge' },
    });
  }

  /** Looks for work now (after a batch is created, or a line ends). */
  poke(): void {
    if (!this.#closed) this.#job.nudge();
  }

  /** One pass; true when it found work or lines are running here. */
  async #tick(): Promise<boolean> {
    const { concurrency, leaseMs } = this.services.config.batches;
    const storage = this.services.storage;
    const now = this.services.clock.now();
    // The lines running here stay leased while this instance lives; a stopped instance's leases run out.
    if (this.#running.size > 0) await storage.batches.renewLeases(this.#owner, now + leaseMs);
    let found = this.#running.size > 0;
    const free = concurrency - this.#running.size;
    if (free > 0) {
      for (const line of await storage.batches.claimLines(this.#owner, now, now + leaseMs, free)) {
        found = true;
        const run = this.#run(line).finally(() => {
          this.#running.delete(run);
          this.poke();
        });
        this.#running.add(run);
      }
    }
    for (let finished = 0; finished < 10 && !this.#closed; finished += 1) {
      const batch = await storage.batches.claimFinalize(this.#owner, this.services.clock.now(), this.services.clock.now() + leaseMs);
      if (batch === null) break;
      found = true;
      await this.#finalize(batch);
    }
    // Expired files are invisible and count against no quota from their expiry on: sweeping them only frees space,
    // so it runs every FILE_SWEEP_MS (every pass while a sweep finds some).
    let swept = 0;
    if (this.#filesFound || now - this.#filesSweptAt >= FILE_SWEEP_MS) {
      this.#filesSweptAt = now;
      const expired = await storage.files.takeExpired(now, SWEEP_LIMIT);
      if (expired.length > 0) await storage.fileContents.delete(expired.map((file) => file.id));
      swept = expired.length + await storage.fileUploads.sweep(now, SWEEP_LIMIT);
      this.#filesFound = swept > 0;
    }
    if (now - this.#holdsSweptAt >= HOLD_SWEEP_MS) {
      this.#holdsSweptAt = now;
      await this.#sweepHolds(now);
    }
    return found || swept > 0;
  }

  /**
   * Releases the holds a stopped instance left behind: those of batches that ended (the instance stopped between the
   * batch's end and its release) and those of batches never queued (it stopped between the hold and the queueing).
   */
  async #sweepHolds(now: number): Promise<void> {
    const { storage, ledger } = this.services;
    for (const { holder, accountId, updatedAt } of await storage.money.listHolders()) {
      const batch = await storage.batches.get(accountId, holder.slice(HOLDER_PREFIX.length));
      const ended = batch === null ? now - updatedAt >= ORPHAN_HOLD_GRACE_MS : (ENDED_BATCH_STATUSES as readonly string[]).includes(batch.status);
      if (!ended) continue;
      const released = await ledger.releaseHolder(holder, accountId);
      if (released > 0n) this.services.logger.warn('batches: released the hold of a batch that had ended or was never queued', { holder, released: released.toString() });
    }
  }

  async #run(line: ClaimedLine): Promise<void> {
    const requestId = lineRequestId(line.batchId, line.line);
    try {
      const outcome = await this.#outcome(line, requestId);
      this.#linesRun += 1;
      // The line's charge against its batch's hold is committed before the line counts as done, so the batch never
      // ends (and releases its hold) ahead of a charge of one of its lines.
      if (!(await this.services.ledger.settledAgainstHolder(requestId, this.services.config.batches.leaseMs))) {
        this.services.logger.warn('batches: a line\'s charge is not committed yet; the line is recorded anyway', { batchId: line.batchId, line: line.line });
      }
      // The line's charge and usage row are committed before its outcome: an instance stopping in between leaves
      // a line that is found charged (and not run again), never one recorded as done whose charge or row was lost.
      await Promise.all([this.services.ledger.flush(), this.services.usageLog.flush()]);
      if (!(await this.services.storage.batches.completeLine(line.batchId, line.line, this.#owner, outcome, this.services.clock.now()))) {
        this.services.logger.warn('batches: a line ended after its lease was taken over; its outcome is dropped', { batchId: line.batchId, line: line.line });
      }
    } catch (error) {
      // The lease runs out and another pass (here or elsewhere) takes the line up again.
      this.services.logger.warn('batches: a line could not be recorded; it is taken up again once its lease runs out', { batchId: line.batchId, line: line.line, ...describeError(error) });
    }
  }

  async #outcome(line: ClaimedLine, requestId: string): Promise<LineOutcome> {
    const { storage, clock } = this.services;
    // Taken over from an instance that stopped: a usage row means it ran and was charged; it is not run again.
    if (line.attempts > 1 && (await storage.batches.requestLogged(requestId))) {
      return failed(requestId, new GatewayError('internal_error', 'This request ran and was charged, but its answer was lost when the gateway instance running it stopped.'));
    }
    const route = this.routes.get(line.endpoint) as BatchRoute;
    const [key, account] = await Promise.all([storage.keys.getById(line.keyId), storage.accounts.getById(line.accountId)]);
    const refusal = key === null || account === null ? 'revoked' : keyRefusalOf(key, account, clock.now());
    if (refusal !== null || key === null || account === null) {
      return failed(requestId, new GatewayError(refusal === 'disabled' ? 'key_disabled' : refusal === 'account_disabled' ? 'account_disabled' : refusal === 'expired' ? 'expired_api_key' : 'revoked_api_key',
        'The batch\'s API key or account may no longer be used.'), route.family);
    }
    const target = lineTarget(line.endpoint, line.body);
    const answer = await runLineRequest({ handler: route.handler, family: route.family, ...target, batchId: line.batchId, requestId, key, account });
    return outcomeOf(answer, requestId);
  }

  async #finalize(batch: Batch): Promise<void> {
    const { storage, clock } = this.services;
    const lines = await storage.batches.finishedLines(batch.id);
    // Only OpenAI's batches write result files; a Message Batch's or a Gemini batch's results are read from its lines.
    // A Gemini batch read from an input file answers in one results file, every request in order.
    const files = (OPENAI_BATCH_ENDPOINTS as readonly string[]).includes(batch.endpoint) ? batchResultFiles(batch.id, lines)
      : batch.endpoint === GEMINI_BATCH_ENDPOINT && batch.metadata?.inputFile !== undefined ? { output: lines.map(geminiFileResultLine).join(''), errors: '' }
        : { output: '', errors: '' };
    const now = clock.now();
    const expiresAt = now + (batch.outputExpiresSeconds ?? OUTPUT_DEFAULT_EXPIRY_SECONDS) * 1000;
    const write = async (content: string, suffix: string): Promise<string | null> => {
      if (content === '') return null;
      const bytes = Buffer.from(content);
      const file: StoredFile = {
        id: newId('file', now), accountId: batch.accountId, purpose: 'batch_output', filename: `${batch.id}_${suffix}.jsonl`, bytes: bytes.length,
        store: storage.fileContents.name, createdAt: now, expiresAt,
      };
      // The results of work already done and paid for are kept whatever the quota.
      await keepFile(storage, file, bytes, Number.MAX_SAFE_INTEGER);
      return file.id;
    };
    const outputFileId = await write(files.output, 'output');
    const errorFileId = await write(files.errors, 'error');
    const status = batch.status === 'cancelling' ? 'cancelled' : lines.some((line) => line.state === 'expired') ? 'expired' : 'completed';
    if (!(await storage.batches.finish(batch.id, this.#owner, { status, at: now, outputFileId, errorFileId }))) {
      // Another instance took the batch over meanwhile: its files win, these go.
      for (const id of [outputFileId, errorFileId]) if (id !== null) await storage.files.delete(batch.accountId, id);
      await storage.fileContents.delete([outputFileId, errorFileId].filter((id): id is string => id !== null));
      return;
    }
    // Every line is charged: what the batch still holds goes back (a stop before this is swept by #sweepHolds).
    await this.services.ledger.releaseHolder(batchHolder(batch.id), batch.accountId);
  }

  /** Stops taking lines; waits for the lines running here (bounded by their own deadlines). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#job.stop();
    await Promise.allSettled([...this.#running]);
  }
}

function failed(requestId: string, error: GatewayError, family?: ClientFamily): LineOutcome {
  return {
    state: 'failed',
    statusCode: error.status,
    requestId,
    result: family === undefined ? JSON.stringify({ error: { message: error.message, type: error.type, code: error.code } }) : family.encodeError(error),
    costNano: 0n,
    tokens: { input: 0, cached: 0, output: 0, reasoning: 0 },
  };
}
