import { once } from 'node:events';
import { admitBatchLines } from '../../batches/batch-admission.js';
import { geminiBatchFileName, parseGeminiBatch, parseGeminiBatchFile, type GeminiBatchInput } from '../../batches/gemini-batch-input.js';
import { recordProviderBatch } from '../../batches/provider-batches/provider-batch-plan.js';
import { GEMINI_BATCH_ENDPOINT, type Batch, type BatchLineCounts } from '../../domain/batches.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import { bareModelName } from '../../wire/gemini/gemini-wire.js';
import { authenticate } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';
import { cancelOwnBatch, deleteEndedBatch, ownBatch, type BatchApi } from './batch-ownership.js';
import { createHeld, holdBatch } from './batches.js';
import { geminiInlinedResponse, geminiOperation, geminiOperationParts } from './gemini-batch-wire.js';
import { fileIdOf, geminiFileName } from './gemini-file-wire.js';

/** A Gemini batch runs for at most 24 hours; requests not run by then expire. */
const PROCESSING_WINDOW_MS = 86_400_000;
const LIST_DEFAULT = 50;
const LIST_MAX = 1000;
/** Finished requests read and written a page at a time, so a large batch's output is never held whole. */
const RESULTS_PAGE = 500;
const NO_COUNTS: BatchLineCounts = { processing: 0, done: 0, failed: 0, cancelled: 0, expired: 0 };

const GEMINI_BATCHES: BatchApi = {
  endpoint: GEMINI_BATCH_ENDPOINT,
  notFound: (id) => new GatewayError('not_found', `Batch 'batches/${id}' was not found.`, { param: 'name' }),
  notEnded: (id) => new GatewayError('bad_request', `Batch 'batches/${id}' has not ended; cancel it and wait for it to end before deleting it.`, { param: 'name' }),
};

async function countsOf(services: GatewayServices, batch: Batch): Promise<BatchLineCounts> {
  return (await services.storage.batches.lineCounts([batch.id])).get(batch.id) ?? NO_COUNTS;
}

/**
 * `POST /v1beta/models/{model}:batchGenerateContent`: queues the inlined `GenerateContentRequest`s for the batch
 * runner, which runs each through `models/{model}:generateContent` in process, on any model (a Claude or OpenAI model
 * translated as any Gemini request is), charged as it completes at batch prices. Every request is checked first
 * (shape, model known and allowed to the key) and every request's worst case is held for the batch's whole life (402
 * or 429 when it cannot be); nothing is queued when a check fails. Answers the batch's operation.
 */
export function createGeminiBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const model = bareModelName(context.params.model ?? '').trim();
    if (model === '') throw new GatewayError('bad_request', 'The model is required in the URL: /v1beta/models/{model}:batchGenerateContent.', { param: 'model' });
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const input = geminiBatchFileName(body);
    const parsed = input === null ? parseGeminiBatch(body, model, services.config.batches.maxLines) : await parseInputFile(services, account.id, input.fileName, model);
    if (!parsed.ok) throw new GatewayError('bad_request', parsed.message, { param: parsed.param });
    const displayName = input === null ? parsed.displayName : input.displayName;
    const admission = admitBatchLines(parsed.lines, GEMINI_BATCH_ENDPOINT, key, (name) => services.catalog.model(name));
    if (!admission.ok) {
      const first = admission.errors[0];
      const line = first?.line ?? 1;
      const named = (JSON.parse(parsed.lines[line - 1]?.body ?? '{}') as { model?: string }).model;
      const at = input === null ? `batch.inputConfig.requests.requests[${line - 1}].request.model` : `batch.inputConfig.fileName: line ${line}: request.model`;
      throw new GatewayError(first?.code === 'model_not_allowed' ? 'model_not_allowed' : 'model_not_found', `${at}: ${first?.message ?? `unknown model '${named ?? ''}'.`}`, { param: at });
    }
    const now = services.clock.now();
    const id = newId('genbatch', now);
    await holdBatch(services, key, account.id, admission.worstCaseNano, id, now);
    const batch: Batch = {
      id, accountId: account.id, keyId: key.id, endpoint: GEMINI_BATCH_ENDPOINT, inputFileId: '', completionWindow: '24h',
      status: 'in_progress', metadata: { model, ...(displayName === null ? {} : { displayName }), ...(input === null ? {} : { inputFile: geminiFileName(fileIdOf(input.fileName)) }) },
      outputFileId: null, errorFileId: null, errors: null, outputExpiresSeconds: null,
      total: parsed.lines.length, completed: 0, failed: 0, costNano: 0n, tokens: { input: 0, cached: 0, output: 0, reasoning: 0 },
      createdAt: now, expiresAt: now + PROCESSING_WINDOW_MS, inProgressAt: now, finalizingAt: null, completedAt: null,
      failedAt: null, expiredAt: null, cancellingAt: null, cancelledAt: null,
    };
    // A batch read from a file answers with a results file, which only the gateway's own queue writes.
    await createHeld(services, batch, input === null ? await recordProviderBatch(services, id, GEMINI_BATCH_ENDPOINT, parsed.lines, now) : parsed.lines);
    sendJson(context, 200, geminiOperation(batch, { ...NO_COUNTS, processing: batch.total }, { withOutput: false }));
  };
}

/** The requests of an input file the caller uploaded (another account's file reads as absent). */
async function parseInputFile(services: GatewayServices, accountId: string, fileName: string, model: string): Promise<GeminiBatchInput> {
  const file = await services.storage.files.get(accountId, fileIdOf(fileName), services.clock.now());
  const content = file === null ? null : await services.storage.fileContents.get(file.id);
  if (content === null) throw new GatewayError('not_found', `File '${fileName}' was not found.`, { param: 'batch.inputConfig.fileName' });
  return parseGeminiBatchFile(content.toString('utf8'), model, services.config.batches.maxLines);
}

/**
 * `GET /v1beta/batches/{id}`: the caller's batch as its operation; once ended, with every request's response or
 * error in request order, read from the database and written a page at a time.
 */
export function getGeminiBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const batch = await ownBatch(services, GEMINI_BATCHES, account.id, context.params.id ?? '');
    const parts = geminiOperationParts(geminiOperation(batch, await countsOf(services, batch), { withOutput: true }));
    const response = context.response;
    response.statusCode = 200;
    response.setHeader('content-type', 'application/json; charset=utf-8');
    for (const [index, part] of parts.entries()) {
      if (index > 0) await streamResponses(services, context, batch);
      if (!response.write(part)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
    }
    response.end();
  };
}

/** Writes the batch's inlined responses as one JSON array, a page of requests at a time. */
async function streamResponses(services: GatewayServices, context: RequestContext, batch: Batch): Promise<void> {
  const response = context.response;
  response.write('[');
  let afterLine = 0;
  let first = true;
  for (let pages = 0; pages <= Math.ceil(batch.total / RESULTS_PAGE) && !response.destroyed; pages += 1) {
    const lines = await services.storage.batches.finishedLines(batch.id, { afterLine, limit: RESULTS_PAGE });
    if (lines.length === 0) break;
    const chunk = lines.map((line) => JSON.stringify(geminiInlinedResponse(line))).join(',');
    // Waits while the client reads slower than the rows arrive (or until it hangs up).
    if (!response.write(`${first ? '' : ','}${chunk}`)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
    first = false;
    afterLine = (lines.at(-1) as (typeof lines)[number]).line;
    if (lines.length < RESULTS_PAGE) break;
  }
  response.write(']');
}

/**
 * `GET /v1beta/batches`: the caller's Gemini batches, newest first, as `{operations, nextPageToken}`; `pageSize` (1 to
 * 1000, default 50) a page, `pageToken` the last page's `nextPageToken`. Listed operations leave out their output
 * (read one batch for it).
 */
export function listGeminiBatchesRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const rawSize = context.query.get('pageSize') ?? context.query.get('page_size');
    const limit = rawSize === null || rawSize === '0' ? LIST_DEFAULT : /^\d{1,5}$/.test(rawSize) ? Number(rawSize) : Number.NaN;
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX) throw new GatewayError('bad_request', `pageSize: must be an integer from 1 to ${LIST_MAX}.`, { param: 'pageSize' });
    const token = context.query.get('pageToken') ?? context.query.get('page_token') ?? '';
    if (token !== '') {
      const found = await services.storage.batches.get(account.id, token);
      if (found === null || found.endpoint !== GEMINI_BATCH_ENDPOINT) throw new GatewayError('bad_request', 'pageToken: not a page token of this listing.', { param: 'pageToken' });
    }
    const rows = await services.storage.batches.list(account.id, { limit, endpoints: [GEMINI_BATCH_ENDPOINT], ...(token === '' ? {} : { after: token }) });
    const page = rows.slice(0, limit);
    const counts = await services.storage.batches.lineCounts(page.map((batch) => batch.id));
    const operations = page.map((batch) => geminiOperation(batch, counts.get(batch.id) ?? NO_COUNTS, { withOutput: false }));
    sendJson(context, 200, { operations, ...(rows.length > limit ? { nextPageToken: page.at(-1)?.id } : {}) });
  };
}

/**
 * `POST /v1beta/batches/{id}:cancel`: requests not started are cancelled at once (never run nor charged); requests
 * running finish and are charged, and the batch ends `BATCH_STATE_CANCELLED`. Answers `{}`, as Google does; an ended
 * batch is left as it is.
 */
export function cancelGeminiBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const id = context.params.id ?? '';
    await cancelOwnBatch(services, GEMINI_BATCHES, account.id, id);
    sendJson(context, 200, {});
  };
}

/** `DELETE /v1beta/batches/{id}`: removes an ended batch and its results (`{}`); one still running must be cancelled first. */
export function deleteGeminiBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const id = context.params.id ?? '';
    await deleteEndedBatch(services, GEMINI_BATCHES, account.id, id);
    sendJson(context, 200, {});
  };
}
