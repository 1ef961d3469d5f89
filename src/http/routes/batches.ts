import { admitBatchLines } from '../../batches/batch-admission.js';
import { cancelBatch, recordProviderBatch } from '../../batches/provider-batches/provider-batch-plan.js';
import { parseBatchInput } from '../../batches/batch-input.js';
import { OPENAI_BATCH_ENDPOINTS, type Batch, type BatchEndpoint, type BatchInputError, type BatchLineInput } from '../../domain/batches.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { projectFundsOf } from '../../projects/project-admission.js';
import { batchHolder } from '../../billing/money-pools.js';
import type { ApiKey } from '../../domain/records.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import { authenticate } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';
import { batchObject } from './batch-wire.js';
import { readListQuery } from './file-wire.js';
import { MAX_EXPIRY_SECONDS, MIN_EXPIRY_SECONDS } from './files.js';
import { signalWork } from '../../shared/work-signals.js';

/** The one completion window offered (OpenAI's). */
const COMPLETION_WINDOW_MS = { '24h': 86_400_000 } as const;
const METADATA_MAX_PAIRS = 16;

function badRequest(message: string, param: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

function readMetadata(raw: unknown): Record<string, string> | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('\'metadata\' must be an object of strings.', 'metadata');
  const entries = Object.entries(raw);
  if (entries.length > METADATA_MAX_PAIRS) throw badRequest(`'metadata' takes at most ${METADATA_MAX_PAIRS} pairs.`, 'metadata');
  for (const [name, value] of entries) {
    if (name.length > 64 || typeof value !== 'string' || value.length > 512) throw badRequest('\'metadata\' keys are at most 64 characters and values strings of at most 512.', `metadata.${name.slice(0, 64)}`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function readOutputExpiry(raw: unknown): number | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('\'output_expires_after\' must be an object.', 'output_expires_after');
  const { anchor, seconds } = raw as Record<string, unknown>;
  if (anchor !== 'created_at') throw badRequest('\'output_expires_after.anchor\' must be \'created_at\'.', 'output_expires_after.anchor');
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < MIN_EXPIRY_SECONDS || seconds > MAX_EXPIRY_SECONDS) {
    throw badRequest(`'output_expires_after.seconds' must be an integer from ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS}.`, 'output_expires_after.seconds');
  }
  return seconds;
}

/** Whether the batch was made through OpenAI's Batch API (an Anthropic Message Batch is not one of its objects). */
const isOpenAIBatch = (batch: Batch): boolean => (OPENAI_BATCH_ENDPOINTS as readonly string[]).includes(batch.endpoint);

function batchNotFound(id: string): GatewayError {
  return new GatewayError('not_found', `No such batch: '${id}'.`, { param: 'batch_id' });
}

/**
 * `POST /v1/batches`: queues the lines of an uploaded `batch` file. The file is checked whole (each line's shape,
 * unique `custom_id`s, every model known, of the endpoint's kind and allowed to the key): a file that fails is
 * answered as a `failed` batch with its errors, as OpenAI does. The worst case of every line at batch prices is held
 * for the batch's whole life (402 or 429 when it cannot be, nothing queued); each line is charged against that hold
 * as it completes, and what is left is released when the batch ends.
 */
export function createBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const { input_file_id: inputFileId, endpoint, completion_window: window } = body;
    if (typeof inputFileId !== 'string' || inputFileId === '') throw badRequest('\'input_file_id\' is required.', 'input_file_id');
    if (typeof endpoint !== 'string' || !(OPENAI_BATCH_ENDPOINTS as readonly string[]).includes(endpoint)) throw badRequest(`'endpoint' must be one of ${OPENAI_BATCH_ENDPOINTS.join(', ')}.`, 'endpoint');
    if (window !== '24h') throw badRequest('\'completion_window\' must be \'24h\'.', 'completion_window');
    const metadata = readMetadata(body.metadata);
    const outputExpiresSeconds = readOutputExpiry(body.output_expires_after);
    const now = services.clock.now();
    const file = await services.storage.files.get(account.id, inputFileId, now);
    if (file === null) throw new GatewayError('not_found', `No such file: '${inputFileId}'.`, { param: 'input_file_id' });
    if (file.purpose !== 'batch') throw badRequest(`The file '${inputFileId}' was uploaded for '${file.purpose}'; a batch needs a file uploaded with purpose 'batch'.`, 'input_file_id');
    const content = await services.storage.fileContents.get(file.id);
    if (content === null) throw new GatewayError('not_found', `No such file: '${inputFileId}'.`, { param: 'input_file_id' });

    const batchEndpoint = endpoint as BatchEndpoint;
    const id = newId('batch', now);
    const parsed = parseBatchInput(content.toString('utf8'), batchEndpoint, services.config.batches.maxLines);
    let errors: BatchInputError[] | null = parsed.ok ? null : parsed.errors;
    let lines: BatchLineInput[] = parsed.ok ? parsed.lines : [];
    if (parsed.ok) {
      const admission = admitBatchLines(parsed.lines, batchEndpoint, key, (name) => services.catalog.model(name));
      if (admission.ok) {
        await holdBatch(services, key, account.id, admission.worstCaseNano, id, now);
      } else {
        errors = admission.errors;
        lines = [];
      }
    }
    const batch: Batch = {
      id, accountId: account.id, keyId: key.id, endpoint: batchEndpoint, inputFileId, completionWindow: '24h',
      status: errors === null ? 'in_progress' : 'failed', metadata, outputFileId: null, errorFileId: null, errors, outputExpiresSeconds,
      total: lines.length, completed: 0, failed: 0, costNano: 0n, tokens: { input: 0, cached: 0, output: 0, reasoning: 0 },
      createdAt: now, expiresAt: now + COMPLETION_WINDOW_MS['24h'], inProgressAt: errors === null ? now : null, finalizingAt: null, completedAt: null,
      failedAt: errors === null ? null : now, expiredAt: null, cancellingAt: null, cancelledAt: null,
    };
    if (errors === null) lines = await recordProviderBatch(services, id, batchEndpoint, lines, now);
    await createHeld(services, batch, lines);
    sendJson(context, 200, batchObject(batch));
  };
}

/**
 * Holds `amountNano` (the batch's worst case) from the key's pools, the subscriptions and the wallet for the batch's
 * whole life, as one durable hold of the ledger under the batch's id, or throws as a request's hold would (402
 * `insufficient_balance` or 429 `quota_exhausted`). Each line is charged against it as it completes; the batch runner
 * releases what is left when the batch ends, however it ends.
 */
export async function holdBatch(services: GatewayServices, key: ApiKey, accountId: string, amountNano: bigint, batchId: string, now: number): Promise<void> {
  const subscriptions = await services.subscriptions.active(accountId);
  await services.ledger.reserve({
    accountId, keyId: key.id, keyCapped: key.quotaNano !== null, keyBudgeted: key.budget !== null,
    subscriptions: subscriptions.map(({ subscription }) => subscription.id), amountNano, entryId: newId('led', now), project: projectFundsOf(key),
    holder: batchHolder(batchId),
  });
}

/** Queues the batch; its hold goes again when it cannot be (a hold left by a crash here is swept by the batch runner). */
export async function createHeld(services: GatewayServices, batch: Batch, lines: readonly BatchLineInput[]): Promise<void> {
  try {
    await services.storage.batches.create(batch, lines);
  } catch (error) {
    await services.ledger.releaseHolder(batchHolder(batch.id), batch.accountId).catch(() => 0n);
    throw error;
  }
  // The runners here start on it at once, however long their idle wait has grown.
  signalWork('batches');
}

/** `GET /v1/batches/{id}`: the caller's batch. */
export function getBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const id = context.params.id ?? '';
    const batch = await services.storage.batches.get(account.id, id);
    if (batch === null || !isOpenAIBatch(batch)) throw batchNotFound(id);
    sendJson(context, 200, batchObject(batch));
  };
}

/** `GET /v1/batches`: the caller's batches, newest first, by cursor (`after`, `limit` up to 100, default 20). */
export function listBatchesRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const query = readListQuery(context.query, 20, 100);
    const rows = await services.storage.batches.list(account.id, { limit: query.limit, ...(query.after === undefined ? {} : { after: query.after }), endpoints: OPENAI_BATCH_ENDPOINTS });
    const data = rows.slice(0, query.limit).map(batchObject);
    sendJson(context, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > query.limit });
  };
}

/**
 * `POST /v1/batches/{id}/cancel`: lines not started are cancelled at once, lines running finish and are charged;
 * the batch reads `cancelling` until its files are written, then `cancelled`. A batch already ended is answered as
 * it is.
 */
export function cancelBatchRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const id = context.params.id ?? '';
    const found = await services.storage.batches.get(account.id, id);
    if (found === null || !isOpenAIBatch(found)) throw batchNotFound(id);
    const batch = await cancelBatch(services, account.id, id);
    if (batch === null) throw batchNotFound(id);
    sendJson(context, 200, batchObject(batch));
  };
}
