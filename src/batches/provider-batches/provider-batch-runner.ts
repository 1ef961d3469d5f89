import { randomUUID } from 'node:crypto';
import { BATCH_ENDPOINTS, type BatchEndpoint, type LineOutcome } from '../../domain/batches.js';
import { ProviderBatchRefused, type BatchApiTarget, type BatchProvider, type ProviderBatch, type ProviderBatchAnswer, type ProviderBatchApi, type ProviderBatchRequest } from '../../domain/provider-batches.js';
import type { Channel } from '../../domain/records.js';
import type { GatewayServices } from '../../services.js';
import { describeError } from '../../shared/logger.js';
import { BackgroundJob } from '../../shared/background-job.js';
import { lineRequestId, type BatchRoute } from '../batch-runner.js';
import { outcomeOf } from '../line-outcome.js';
import { runLineRequest } from '../line-request.js';
import { upstreamModelOf } from './provider-batch-plan.js';
import { providerAnswerRoute } from './provider-line-answer.js';

/** Provider batches looked at in one pass. */
const PER_PASS = 5;
/** The error recorded for a line the provider's ended batch holds no answer to. */
const NO_ANSWER = JSON.stringify({ error: { message: 'The provider\'s batch ended without an answer to this request.', type: 'upstream_error', code: 'upstream_error' } });

/** The note left on a provider batch whose gateway batch was not found yet. */
const MISSING_BATCH = 'The gateway batch was not found.';

const isEndpoint = (value: string): value is BatchEndpoint => (BATCH_ENDPOINTS as readonly string[]).includes(value);

/**
 * Runs the batches sent to a provider's own batch API: submits each one's requests (model names mapped to the
 * channel's upstream names), polls the upstream batch every BATCH_PROVIDER_POLL_SECONDS, passes a caller's cancel
 * on, and once it has ended records the provider's answer to each line (by `custom_id`) through the metered frame,
 * charged once at the model's batch price under the line's fixed request id. Lines it holds no answer to end
 * cancelled, expired or failed as the upstream batch did. A batch the provider refuses is run by the gateway's own
 * queue instead. One instance at a time works on a batch (a lease in the database); another takes it over once the
 * lease runs out, and a line already charged is not charged again.
 */
export class ProviderBatchRunner {
  readonly #owner: string;
  readonly #job = new BackgroundJob(() => this.#tick());
  #closed = false;

  constructor(
    private readonly services: GatewayServices,
    private readonly routes: ReadonlyMap<BatchEndpoint, BatchRoute>,
    private readonly apis: Readonly<Record<BatchProvider, ProviderBatchApi | undefined>>,
    /** Called when a batch's lines are all settled, or it falls back to the queue (the queue runner looks again). */
    private readonly onLinesChanged: () => void,
  ) {
    this.#owner = `${services.ledger.instanceId}:provider:${randomUUID().slice(0, 8)}`;
  }

  /**
   * Looks for due provider batches every BATCH_POLL_MS while it finds some, less often while it finds none (up to
   * the idle maximum), and at once when a batch is created or cancelled in this process.
   */
  start(): void {
    if (this.#closed) return;
    this.#job.start({
      name: 'provider batches', baseMs: this.services.config.batches.pollMs, logger: this.services.logger,
      found: (found) => found, wakeOn: { kind: 'batches', how: 'nudge' },
    });
  }

  poke(): void {
    if (!this.#closed) this.#job.nudge();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#job.stop();
  }

  /** Up to PER_PASS due provider batches, one step each; true when it found any. */
  async #tick(): Promise<boolean> {
    const { storage, clock, config } = this.services;
    for (let count = 0; count < PER_PASS && !this.#closed; count += 1) {
      const now = clock.now();
      const work = await storage.providerBatches.claimDue(this.#owner, now, now + config.batches.leaseMs);
      if (work === null) return count > 0;
      try {
        await this.#step(work);
      } catch (error) {
        this.services.logger.warn('provider batches: a step failed; it is retried at the next poll', { batchId: work.batchId, ...describeError(error) });
        await storage.providerBatches.update(work.batchId, this.#owner, { nextAt: clock.now() + config.batches.providerPollMs, error: error instanceof Error ? error.message.slice(0, 500) : 'failed' });
      }
    }
    return true;
  }

  async #step(work: ProviderBatch): Promise<void> {
    const { storage, clock, config } = this.services;
    const batch = await storage.providerBatches.batchOf(work.batchId);
    const api = this.apis[work.provider];
    const channel = this.services.catalog.channels().find((entry) => entry.id === work.channelId);
    // The provider batch is recorded just before its gateway batch: one not there yet is looked at again shortly,
    // and one still missing then is gone (its creation failed).
    if (batch === null && work.error !== MISSING_BATCH) {
      await storage.providerBatches.update(work.batchId, this.#owner, { nextAt: clock.now() + config.batches.pollMs, error: MISSING_BATCH });
      return;
    }
    if (batch === null || !isEndpoint(batch.endpoint)) {
      await storage.providerBatches.update(work.batchId, this.#owner, { state: 'done' });
      return;
    }
    const endpoint = batch.endpoint;
    const cancelling = batch.status === 'cancelling';
    if (work.state === 'submit') {
      if (cancelling) return this.#close(work, 'cancelled');
      if (api === undefined || channel === undefined || !channel.enabled || channel.apiKeys.length === 0) return this.#fallBack(work, 'The channel can no longer take the batch.');
      const lines = await storage.providerBatches.openLines(work.batchId);
      const target = targetOf(channel);
      // A submit begun before (the instance stopped before recording the provider's id) may have reached the
      // provider: the batch it made is taken up rather than submitted twice.
      if (work.submitStartedAt !== null) {
        const found = await this.#findSubmitted(work, api, target, lines.length);
        if (found !== null) {
          await storage.providerBatches.update(work.batchId, this.#owner, { state: 'running', upstreamBatchId: found, nextAt: clock.now(), error: null });
          return;
        }
      }
      // A provider's batch would take the lines as they are: where guardrail policies apply to a line, the batch runs
      // here instead, each line through its route, where its input is checked.
      if (work.submitStartedAt === null && (await this.#guarded(batch, lines))) return this.#fallBack(work, 'Guardrail policies apply to the batch\'s lines; they run through the gateway, where they are checked.');
      // The intent is recorded before the provider is called.
      if (!(await storage.providerBatches.markSubmitting(work.batchId, this.#owner, work.submitStartedAt ?? clock.now()))) return;
      const translation = api.translations?.[endpoint] ?? null;
      let requests: ProviderBatchRequest[];
      try {
        requests = lines.map((line) => {
          const body = JSON.parse(line.body) as Record<string, unknown>;
          const upstreamModel = upstreamModelOf(this.services, channel, body.model as string);
          return { customId: api.requestKey(work.batchId, line), body: translation === null ? { ...body, model: upstreamModel } : translation.toProvider(body, channel, upstreamModel) };
        });
      } catch (error) {
        return this.#fallBack(work, `A line cannot be sent in the provider's shape: ${error instanceof Error ? error.message : 'refused'}`);
      }
      try {
        const submitted = await api.submit(target, endpoint, requests, work.batchId);
        await storage.providerBatches.update(work.batchId, this.#owner, { state: 'running', upstreamBatchId: submitted.batchId, upstreamFileId: submitted.fileId, nextAt: clock.now() + config.batches.providerPollMs, error: null });
      } catch (error) {
        if (error instanceof ProviderBatchRefused) return this.#fallBack(work, error.message);
        throw error;
      }
      return;
    }
    if (api === undefined || channel === undefined || work.upstreamBatchId === null) throw new Error('The channel of this provider batch is gone; it is looked at again later.');
    const target = targetOf(channel);
    let upstreamStatus = work.upstreamStatus;
    if (work.state === 'running') {
      let cancelSent = work.cancelSent;
      if (cancelling && !cancelSent) {
        await api.cancel(target, work.upstreamBatchId);
        cancelSent = true;
      }
      const state = await api.poll(target, work.upstreamBatchId);
      upstreamStatus = state.status;
      if (!state.ended) {
        await storage.providerBatches.update(work.batchId, this.#owner, { upstreamStatus, cancelSent, nextAt: clock.now() + config.batches.providerPollMs, error: null });
        return;
      }
      // The provider failed the batch as a whole (its input refused): the gateway's queue runs it instead.
      if (state.how === 'failed' && !cancelling) return this.#fallBack(work, `The provider's batch ${work.upstreamBatchId} failed.`);
    }
    const answers = await api.answers(target, work.upstreamBatchId);
    await this.#collect(work, endpoint, channel, answers);
    const how = upstreamStatus === 'expired' ? 'expired' : cancelling || upstreamStatus === 'cancelled' || upstreamStatus === 'failed' ? 'cancelled' : 'failed';
    return this.#close({ ...work, upstreamStatus }, how);
  }

  /** The provider batch an earlier submit of this batch made, if the provider has one no other gateway batch runs as. */
  async #findSubmitted(work: ProviderBatch, api: ProviderBatchApi, target: BatchApiTarget, count: number): Promise<string | null> {
    const candidates = await api.find(target, { label: work.batchId, since: work.submitStartedAt ?? 0, count });
    for (const candidate of candidates) {
      if (!(await this.services.storage.providerBatches.upstreamTaken(work.channelId, candidate, work.batchId))) {
        this.services.logger.info('provider batches: an earlier submit reached the provider; its batch is taken up', { batchId: work.batchId, upstreamBatchId: candidate });
        return candidate;
      }
    }
    return null;
  }

  /** Records the provider's answer to each open line it answered, charged once. */
  async #collect(work: ProviderBatch, endpoint: BatchEndpoint, channel: Channel, answers: readonly ProviderBatchAnswer[]): Promise<void> {
    const { storage, clock, config } = this.services;
    const api = this.apis[work.provider] as ProviderBatchApi;
    const open = new Map((await storage.providerBatches.openLines(work.batchId)).map((line) => [api.requestKey(work.batchId, line), line]));
    const batch = await storage.providerBatches.batchOf(work.batchId);
    if (batch === null) return;
    const [key, account] = await Promise.all([storage.keys.getById(batch.keyId), storage.accounts.getById(batch.accountId)]);
    if (key === null || account === null) return;
    const route = this.routes.get(endpoint) as BatchRoute;
    for (const answer of answers) {
      const line = open.get(answer.customId);
      if (line === undefined || this.#closed) continue;
      const now = clock.now();
      if (!(await storage.providerBatches.takeLine(work.batchId, line.line, this.#owner, now, now + config.batches.leaseMs))) continue;
      const requestId = lineRequestId(work.batchId, line.line);
      const model = (JSON.parse(line.body) as { model: string }).model;
      const translation = api.translations?.[endpoint] ?? null;
      const answered = translation === null ? answer : translation.fromProvider(answer, model);
      let outcome: LineOutcome;
      if (await storage.batches.requestLogged(requestId)) {
        // Charged by an instance that stopped before recording the answer: recorded now, not charged again.
        outcome = { ...outcomeOf({ status: answered.status, headers: {}, body: Buffer.from(JSON.stringify(answered.body)) }, requestId), costNano: 0n };
      } else {
        const handler = providerAnswerRoute(this.services, { endpoint, channelId: channel.id, model, status: answered.status, body: answered.body });
        const reply = await runLineRequest({ handler, family: route.family, path: endpoint, batchId: work.batchId, requestId, key, account, body: '{}' });
        // Its charge against the batch's hold is committed before the line counts as done (the batch's end releases the hold).
        if (!(await this.services.ledger.settledAgainstHolder(requestId, config.batches.leaseMs))) {
          this.services.logger.warn('provider batches: a line\'s charge is not committed yet; the line is recorded anyway', { batchId: work.batchId, line: line.line });
        }
        // The charge and usage row are committed before the outcome (as the queue runner does).
        await Promise.all([this.services.ledger.flush(), this.services.usageLog.flush()]);
        outcome = outcomeOf(reply, requestId);
      }
      await storage.batches.completeLine(work.batchId, line.line, this.#owner, outcome, clock.now());
    }
  }

  /** The lines left open end as `how`; the batch is done here and finalized by the queue runner. */
  async #close(work: ProviderBatch, how: 'cancelled' | 'expired' | 'failed'): Promise<void> {
    const { storage, clock } = this.services;
    await storage.providerBatches.closePendingLines(work.batchId, how, how === 'failed' ? NO_ANSWER : null, clock.now());
    await storage.providerBatches.update(work.batchId, this.#owner, { state: 'done', upstreamStatus: work.upstreamStatus });
    this.onLinesChanged();
  }

  /** Whether guardrail policies apply to any line's model for the batch's caller (resolved as a request's are). */
  async #guarded(batch: { accountId: string; keyId: string }, lines: readonly { body: string }[]): Promise<boolean> {
    const key = await this.services.storage.keys.getById(batch.keyId);
    const caller = { accountId: batch.accountId, projectId: key?.projectId ?? null, keyId: batch.keyId };
    const models = new Set(lines.map((line) => (JSON.parse(line.body) as { model?: unknown }).model).filter((model): model is string => typeof model === 'string'));
    for (const model of models) {
      const policies = this.services.guardrails.forRequest(model, caller);
      if (policies !== null && (await policies) !== null) return true;
    }
    return false;
  }

  async #fallBack(work: ProviderBatch, reason: string): Promise<void> {
    this.services.logger.warn('provider batches: the provider cannot take the batch; the gateway\'s queue runs it', { batchId: work.batchId, reason: reason.slice(0, 300) });
    await this.services.storage.providerBatches.update(work.batchId, this.#owner, { state: 'fallback', error: reason.slice(0, 500) });
    this.onLinesChanged();
  }
}

/** The channel's first key, base URL and extra headers, as the batch API is called with them. */
function targetOf(channel: Channel): BatchApiTarget {
  return { baseUrl: channel.baseUrl, apiKey: channel.apiKeys[0] as string, headers: channel.headers };
}
