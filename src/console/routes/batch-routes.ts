import { nanoToUsd } from '../../billing/money.js';
import type { ConsoleBatchAnswerJson, ConsoleBatchJson, ConsoleBatchListJson } from '../../contract/batches.js';
import type { Batch } from '../../domain/batches.js';
import type { ApiKey } from '../../domain/records.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { RequestContext } from '../../http/request-context.js';
import { sendJson, sendRaw } from '../../http/respond.js';
import type { ConsoleDeps } from '../console-deps.js';
import { consoleRoutes } from '../console-route-table.js';
import { keyInScope, mayWriteProject } from '../project-scope.js';
import { roleAllows } from '../roles.js';
import type { ActiveSession } from '../session-store.js';

const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;
/** A member scoped to projects sees only their projects' batches: at most this many rows are read to fill a page. */
const MAX_SCANNED = 2_000;
/** Input-file problems shown per failed batch (the API's batch object has them all). */
const MAX_ERRORS_SHOWN = 5;
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No batch with id '${id}'.`);
}

/** When the batch reached its final status (null while it runs). */
function endedAt(batch: Batch): number | null {
  switch (batch.status) {
    case 'completed': return batch.completedAt;
    case 'failed': return batch.failedAt;
    case 'expired': return batch.expiredAt;
    case 'cancelled': return batch.cancelledAt;
    default: return null;
  }
}

function readLimit(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) return DEFAULT_PAGE;
  const value = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= MAX_PAGE)) throw new GatewayError('bad_request', `'limit' must be an integer from 1 to ${MAX_PAGE}.`, { param: 'limit' });
  return value;
}

/**
 * The account's batches (docs/console-api.md, "Batches"). Everyone who may read usage sees them; cancelling and
 * downloading the result files (the model's answers) takes the right to use the account's keys, and a member scoped
 * to projects reaches only the batches of their projects' keys (with a developer role in that project to change
 * them). Every id is looked up within the session's account: another account's batch answers 404.
 */
export const BATCH_CONSOLE_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;
  const keyOf = async (accountId: string, keyId: string, cache: Map<string, ApiKey | null>): Promise<ApiKey | null> => {
    if (!cache.has(keyId)) {
      const key = await storage.keys.getById(keyId);
      cache.set(keyId, key !== null && key.accountId === accountId ? key : null);
    }
    return cache.get(keyId) ?? null;
  };
  /** A batch the caller may see (a scoped member: only batches of their projects' keys). */
  const visible = (active: ActiveSession, key: ApiKey | null): boolean => active.projects === null || (key !== null && keyInScope(active.projects, key));
  const mayManage = (active: ActiveSession, key: ApiKey | null): boolean =>
    roleAllows(active.role, 'keys:write') && mayWriteProject(active.projects, key?.projectId ?? null);
  const batchJson = (batch: Batch, key: ApiKey | null, active: ActiveSession): ConsoleBatchJson => ({
    id: batch.id,
    status: batch.status,
    endpoint: batch.endpoint,
    key_id: batch.keyId,
    key_name: key?.name ?? null,
    project_id: key?.projectId ?? null,
    total: batch.total,
    completed: batch.completed,
    failed: batch.failed,
    cost_nano: batch.costNano.toString(),
    cost_usd: nanoToUsd(batch.costNano),
    errors: (batch.errors ?? []).slice(0, MAX_ERRORS_SHOWN).map((error) => (error.line === null ? error.message : `Line ${error.line}: ${error.message}`)),
    has_output: batch.outputFileId !== null,
    has_errors: batch.errorFileId !== null,
    can_manage: mayManage(active, key),
    created_at: new Date(batch.createdAt).toISOString(),
    expires_at: new Date(batch.expiresAt).toISOString(),
    ended_at: iso(endedAt(batch)),
  });
  /** The caller's batch and its key, or 404 (another account's, or outside a scoped member's projects). */
  const ownBatch = async (active: ActiveSession, id: string): Promise<{ batch: Batch; key: ApiKey | null }> => {
    const accountId = active.session.accountId;
    const batch = await storage.batches.get(accountId, id);
    if (batch === null) throw notFound(id);
    const key = await keyOf(accountId, batch.keyId, new Map());
    if (!visible(active, key)) throw notFound(id);
    return { batch, key };
  };
  const requireManage = (active: ActiveSession, key: ApiKey | null): void => {
    if (!mayManage(active, key)) throw new GatewayError('forbidden', 'Your role does not allow cancelling batches or downloading their results.');
  };
  /** A result file of the caller's batch, as a download. */
  const download = async (context: RequestContext, active: ActiveSession, which: 'output' | 'errors'): Promise<void> => {
    const { batch, key } = await ownBatch(active, context.params.id ?? '');
    requireManage(active, key);
    const fileId = which === 'output' ? batch.outputFileId : batch.errorFileId;
    if (fileId === null) throw new GatewayError('not_found', which === 'output' ? 'This batch has no output file (yet).' : 'This batch has no error file.');
    const file = await storage.files.get(active.session.accountId, fileId, clock.now());
    const content = file === null ? null : await storage.fileContents.get(file.id);
    if (content === null) throw new GatewayError('not_found', 'The file has expired or was deleted.');
    sendRaw(context, 200, content, 'application/jsonl', {
      'content-disposition': `attachment; filename="${batch.id}-${which}.jsonl"`,
      'cache-control': 'no-store',
    });
  };

  return { storage, clock, keyOf, visible, batchJson, ownBatch, requireManage, download };
}, [
  { method: 'GET', path: '/api/console/batches', who: 'member', permission: 'usage:read', handler: ({ storage, keyOf, visible, batchJson }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const limit = readLimit(context.query);
    let after = context.query.get('after') ?? undefined;
    if (after !== undefined && (after === '' || after.length > 100)) throw new GatewayError('bad_request', "'after' must be the id of a batch of the previous page.", { param: 'after' });
    const keys = new Map<string, ApiKey | null>();
    const found: ConsoleBatchJson[] = [];
    // Unscoped callers read one page; a scoped member's page is filled from as many pages as it takes (bounded).
    const pageSize = active.projects === null ? limit : MAX_PAGE;
    let more = true;
    for (let scanned = 0; more && found.length <= limit && scanned < MAX_SCANNED;) {
      const rows = await storage.batches.list(accountId, { limit: pageSize, ...(after === undefined ? {} : { after }) });
      const page = rows.slice(0, pageSize);
      more = rows.length > pageSize && page.length > 0;
      scanned += page.length;
      for (const batch of page) {
        const key = await keyOf(accountId, batch.keyId, keys);
        if (visible(active, key)) found.push(batchJson(batch, key, active));
      }
      after = page.at(-1)?.id ?? after;
      if (active.projects === null) break;
    }
    const shown = found.slice(0, limit);
    const hasMore = found.length > limit || more;
    // The next page starts after the last row shown, or after the last row read when every visible one is shown.
    const cursor = found.length > limit ? shown.at(-1)?.id ?? null : hasMore ? after ?? null : shown.at(-1)?.id ?? null;
    sendJson(context, 200, { data: shown, has_more: hasMore, last_id: cursor } satisfies ConsoleBatchListJson);
  } },
  { method: 'POST', path: '/api/console/batches/:id/cancel', who: 'member', permission: 'usage:read', handler: ({ storage, clock, ownBatch, requireManage, batchJson }) => async ({ context, active }) => {
    const { batch, key } = await ownBatch(active, context.params.id ?? '');
    requireManage(active, key);
    // A batch that already ended is answered as it is (the API's cancel does the same).
    const cancelled = await storage.batches.cancel(active.session.accountId, batch.id, clock.now()) ?? batch;
    sendJson(context, 200, { batch: batchJson(cancelled, key, active) } satisfies ConsoleBatchAnswerJson);
  } },
  { method: 'GET', path: '/api/console/batches/:id/output', who: 'member', permission: 'usage:read', handler: ({ download }) => async ({ context, active }) => {
    await download(context, active, 'output');
  } },
  { method: 'GET', path: '/api/console/batches/:id/errors', who: 'member', permission: 'usage:read', handler: ({ download }) => async ({ context, active }) => {
    await download(context, active, 'errors');
  } },
]);
