import { once } from 'node:events';
import { admitBatchLines } from '../../batches/batch-admission.js';
import { parseMessageBatchRequests } from '../../batches/message-batch-input.js';
import { recordProviderBatch } from '../../batches/provider-batches/provider-batch-plan.js';
import { MESSAGE_BATCH_ENDPOINT, type Batch } from '../../domain/batches.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import { authenticate } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';
import { cancelOwnBatch, deleteEndedBatch, ownBatch, type BatchApi } from './batch-ownership.js';
import { createHeld, holdBatch } from './batches.js';
import { messageBatchObject, messageBatchResultLine, processingStatus } from './message-batch-wire.js';

/** A Message Batch runs for at most 24 hours; lines not run by then expire. */
const PROCESSING_WINDOW_MS = 86_400_000;
const LIST_DEFAULT = 20;
const LIST_MAX = 1000;
const PATH = '/v1/messages/batches';

const MESSAGE_BATCHES: BatchApi = {
  endpoint: MESSAGE_BATCH_ENDPOINT,
  notFound: (id) => new GatewayError('not_found', `No such message batch: '${id}'.`, { param: 'message_batch_id' }),
  notEnded: (id) => new GatewayError('bad_request', `Message batch '${id}' has not ended; cancel it and wait for it to end before deleting it.`, { param: 'message_batch_id' }),
};

/** Where a batch's results are read: under API_PUBLIC_URL, else the address the client called. */
function resultsUrl(services: GatewayServices, context: RequestContext, id: string): string {
  const origin = services.config.apiPublicUrl ?? `http://${context.request.headers.host ?? '127.0.0.1'}`;
  return `${origin}${PATH}/${id}/results`;
}

async function send(services: GatewayServices, context: RequestContext, batch: Batch): Promise<void> {
  const counts = (await services.storage.batches.lineCounts([batch.id])).get(batch.id);
  sendJson(context, 200, messageBatchObject(batch, counts ?? { processing: 0, done: 0, failed: 0, cancelled: 0, expired: 0 }, resultsUrl(services, context, batch.id)));
}

/**
 * `POST /v1/messages/batches`: queues `requests` (each `custom_id` and Messages `params`) for the batch runner, which
 * runs each through `/v1/messages` in process, on any model (translated as any Messages request is), charged as it
 * completes at batch prices. Every request is checked first (shape, unique ids, model known and allowed to the key)
 * and every request's worst case is held for the batch's whole life (402 or 429 when it cannot be); nothing is queued
 * when a check fails. Each request is charged against the hold as it completes; the rest is released at the end.
 */
export function createMessageBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const parsed = parseMessageBatchRequests(body.requests, services.config.batches.maxLines);
    if (!parsed.ok) throw new GatewayError('bad_request', parsed.message, { param: parsed.param });
    const admission = admitBatchLines(parsed.lines, MESSAGE_BATCH_ENDPOINT, key, (name) => services.catalog.model(name));
    if (!admission.ok) {
      const first = admission.errors[0];
      const at = `requests.${(first?.line ?? 1) - 1}.params.model`;
      throw new GatewayError(first?.code === 'model_not_allowed' ? 'model_not_allowed' : 'model_not_found', `${at}: ${first?.message ?? 'unknown model.'}`, { param: at });
    }
    const now = services.clock.now();
    const id = newId('msgbatch', now);
    await holdBatch(services, key, account.id, admission.worstCaseNano, id, now);
    const batch: Batch = {
      id, accountId: account.id, keyId: key.id, endpoint: MESSAGE_BATCH_ENDPOINT, inputFileId: '', completionWindow: '24h',
      status: 'in_progress', metadata: null, outputFileId: null, errorFileId: null, errors: null, outputExpiresSeconds: null,
      total: parsed.lines.length, completed: 0, failed: 0, costNano: 0n, tokens: { input: 0, cached: 0, output: 0, reasoning: 0 },
      createdAt: now, expiresAt: now + PROCESSING_WINDOW_MS, inProgressAt: now, finalizingAt: null, completedAt: null,
      failedAt: null, expiredAt: null, cancellingAt: null, cancelledAt: null,
    };
    await createHeld(services, batch, await recordProviderBatch(services, id, MESSAGE_BATCH_ENDPOINT, parsed.lines, now));
    sendJson(context, 200, messageBatchObject(batch, { processing: batch.total, done: 0, failed: 0, cancelled: 0, expired: 0 }, resultsUrl(services, context, id)));
  };
}

/** `GET /v1/messages/batches/{id}`: the caller's batch. */
export function getMessageBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    await send(services, context, await ownBatch(services, MESSAGE_BATCHES, account.id, context.params.id ?? ''));
  };
}

/**
 * `GET /v1/messages/batches`: the caller's Message Batches, newest first, `limit` (1 to 1000, default 20) a page;
 * `after_id` pages to older ones, `before_id` to newer ones; `first_id`/`last_id` are the page's ends.
 */
export function listMessageBatchesRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const rawLimit = context.query.get('limit');
    const limit = rawLimit === null ? LIST_DEFAULT : /^\d{1,5}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX) throw new GatewayError('bad_request', `limit: must be an integer from 1 to ${LIST_MAX}.`, { param: 'limit' });
    const after = context.query.get('after_id') ?? undefined;
    const before = context.query.get('before_id') ?? undefined;
    if (after !== undefined && before !== undefined) throw new GatewayError('bad_request', 'Only one of after_id and before_id may be given.', { param: 'before_id' });
    const rows = await services.storage.batches.list(account.id, {
      limit, endpoints: [MESSAGE_BATCH_ENDPOINT], ...(after === undefined ? {} : { after }), ...(before === undefined ? {} : { before }),
    });
    const hasMore = rows.length > limit;
    // Reading newer ones (`before_id`), the extra row is the newest; otherwise the oldest.
    const page = before === undefined ? rows.slice(0, limit) : rows.slice(rows.length - Math.min(rows.length, limit));
    const counts = await services.storage.batches.lineCounts(page.map((batch) => batch.id));
    const data = page.map((batch) => messageBatchObject(batch, counts.get(batch.id) ?? { processing: 0, done: 0, failed: 0, cancelled: 0, expired: 0 }, resultsUrl(services, context, batch.id)));
    sendJson(context, 200, { data, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null });
  };
}

/**
 * `POST /v1/messages/batches/{id}/cancel`: requests not started are canceled at once (never run nor charged);
 * requests running finish and are charged. The batch reads `canceling` until it has ended. An ended batch is
 * answered as it is.
 */
export function cancelMessageBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const id = context.params.id ?? '';
    await send(services, context, await cancelOwnBatch(services, MESSAGE_BATCHES, account.id, id));
  };
}

/** `DELETE /v1/messages/batches/{id}`: removes an ended batch and its results; one still processing must be canceled first. */
export function deleteMessageBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const id = context.params.id ?? '';
    await deleteEndedBatch(services, MESSAGE_BATCHES, account.id, id);
    sendJson(context, 200, { id, type: 'message_batch_deleted' });
  };
}

/**
 * `GET /v1/messages/batches/{id}/results`: once the batch has ended, one JSON line per request in request order,
 * `{custom_id, result}` with the Message (`succeeded`), the error (`errored`), or `canceled` / `expired`.
 */
export function messageBatchResultsRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const id = context.params.id ?? '';
    const batch = await ownBatch(services, MESSAGE_BATCHES, account.id, id);
    if (processingStatus(batch) !== 'ended') throw new GatewayError('bad_request', `Message batch '${id}' has not ended yet; its results are available once processing_status is 'ended'.`, { param: 'message_batch_id' });
    await streamResults(services, context, batch);
  };
}

/** Result lines read and written a page at a time, so a large batch is never held whole. */
const RESULTS_PAGE = 500;

async function streamResults(services: GatewayServices, context: RequestContext, batch: Batch): Promise<void> {
  const response = context.response;
  response.statusCode = 200;
  response.setHeader('content-type', 'application/x-jsonl');
  let afterLine = 0;
  for (let pages = 0; pages <= Math.ceil(batch.total / RESULTS_PAGE) && !response.destroyed; pages += 1) {
    const lines = await services.storage.batches.finishedLines(batch.id, { afterLine, limit: RESULTS_PAGE });
    if (lines.length === 0) break;
    const chunk = lines.map((line) => `${messageBatchResultLine(line)}\n`).join('');
    // Waits while the client reads slower than the rows arrive (or until it hangs up).
    if (!response.write(chunk)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
    afterLine = (lines.at(-1) as (typeof lines)[number]).line;
    if (lines.length < RESULTS_PAGE) break;
  }
  response.end();
}
