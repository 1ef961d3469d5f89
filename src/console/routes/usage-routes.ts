import { nanoToUsd } from '../../billing/money.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { subscriptionAt } from '../../billing/subscription-changes.js';
import type { RequestContext } from '../../http/request-context.js';
import { sendJson } from '../../http/respond.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { isoTime, timeInput } from '../../management/time-input.js';
import { csvLine } from '../../shared/csv.js';
import { usageQueryFrom, usageRowToJson } from '../../management/usage-input.js';
import type { UsageQuery } from '../../domain/usage-records.js';
import { InvalidCursorError } from '../../storage/usage-cursor.js';
import type { ConsoleDeps } from '../console-deps.js';
import { UsageNames } from '../usage-names.js';
import { scopedKeyIds } from '../project-scope.js';
import type { ActiveSession } from '../session-store.js';
import { consoleRoutes } from '../console-route-table.js';
import type { DailyUsageListJson, OverviewJson, UsagePageJson, UsageRowJson } from '../../contract/usage.js';

const DAY_MS = 86_400_000;
/** The daily chart spans at most this many days. */
const MAX_DAILY_SPAN_DAYS = 400;
/** A CSV export holds at most this many rows (narrow the dates for more). */
const MAX_CSV_ROWS = 100_000;
export const CSV_COLUMNS = [
  'created_at', 'request_id', 'key_id', 'model', 'endpoint', 'stream', 'status', 'error_code', 'prompt_tokens', 'completion_tokens',
  'cached_tokens', 'reasoning_tokens', 'total_tokens', 'cost_usd', 'latency_ms', 'ttfb_ms', 'web_searches', 'web_fetches', 'file_searches',
  'hosted_tool_cost_usd',
] as const satisfies readonly (keyof UsageRowJson)[];

/** The console's usage filters: the admin API's, always narrowed to the session's account (and a scoped member's projects). */
async function accountUsageQuery(deps: ConsoleDeps, query: URLSearchParams, active: ActiveSession): Promise<UsageQuery> {
  const accountId = active.session.accountId;
  const keyIds = await scopedKeyIds(deps.services.storage, accountId, active.projects);
  return { ...usageQueryFrom(query), accountId, ...(keyIds === null ? {} : { keyIds }) };
}

function badCursor(): GatewayError {
  return new GatewayError('bad_request', "'cursor' is not a cursor this endpoint returned.", { param: 'cursor' });
}

export function timeParam(query: URLSearchParams, name: string, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  const parsed = timeInput.safeParse(/^\d+$/.test(raw) ? Number(raw) : raw);
  if (!parsed.success) throw new GatewayError('bad_request', `'${name}' must be an ISO 8601 time or Unix seconds.`, { param: name });
  return parsed.data;
}

/** Streams the usage rows of `filter` as CSV (also the operator's export, with the account and channel columns). */
export async function writeCsv(deps: ConsoleDeps, context: RequestContext, filter: UsageQuery, columns: readonly (keyof UsageRowJson)[] = CSV_COLUMNS): Promise<void> {
  const response = context.response;
  response.statusCode = 200;
  response.setHeader('content-type', 'text/csv; charset=utf-8');
  response.setHeader('content-disposition', `attachment; filename="usage-${new Date(deps.services.clock.now()).toISOString().slice(0, 10)}.csv"`);
  response.write(`${columns.join(',')}\r\n`);
  let after: string | null = null;
  let written = 0;
  do {
    const page = await deps.services.storage.usage.query(filter, { limit: 200, after });
    let chunk = '';
    for (const row of page.data) {
      const json = usageRowToJson(row);
      chunk += csvLine(columns.map((column) => json[column]));
    }
    written += page.data.length;
    if (chunk !== '' && !response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
    after = page.nextCursor;
  } while (after !== null && written < MAX_CSV_ROWS && !response.destroyed);
  response.end();
}

/** The account's usage log (metadata only), its CSV export, daily totals and the overview figures. */
export const USAGE_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, ledger, usageLog } = deps.services;
  return { deps, storage, clock, ledger, usageLog };
}, [
  { method: 'GET', path: '/api/usage', who: 'member', permission: 'usage:read', handler: ({ deps, storage, usageLog }) => async ({ context, active }) => {
    const filter = await accountUsageQuery(deps, context.query, active);
    const page = pageRequestFrom(context.query);
    await usageLog.flush();
    try {
      const found = await storage.usage.query(filter, page);
      const names = new UsageNames(storage);
      const rows = await Promise.all(found.data.map((row) => names.rowJson(row)));
      sendJson(context, 200, pageJson({ data: rows, nextCursor: found.nextCursor }, (row) => row) satisfies UsagePageJson);
    } catch (error) {
      if (error instanceof InvalidCursorError) throw badCursor();
      throw error;
    }
  } },

  { method: 'GET', path: '/api/usage.csv', who: 'member', permission: 'usage:read', handler: ({ deps, usageLog }) => async ({ context, active }) => {
    const filter = await accountUsageQuery(deps, context.query, active);
    await usageLog.flush();
    await writeCsv(deps, context, filter);
  } },

  { method: 'GET', path: '/api/usage/daily', who: 'member', permission: 'usage:read', handler: ({ storage, clock, usageLog }) => async ({ context, active }) => {
    const now = clock.now();
    const to = timeParam(context.query, 'to', now);
    const from = timeParam(context.query, 'from', to - 30 * DAY_MS);
    if (from > to) throw new GatewayError('bad_request', "'from' must not be after 'to'.", { param: 'from' });
    if (to - from > MAX_DAILY_SPAN_DAYS * DAY_MS) throw new GatewayError('bad_request', `The range spans at most ${MAX_DAILY_SPAN_DAYS} days.`, { param: 'from' });
    await usageLog.flush();
    const scoped = await scopedKeyIds(storage, active.session.accountId, active.projects);
    const totals = (await storage.usage.dailyTotals({ accountId: active.session.accountId, from, to })).filter((total) => scoped === null || (total.keyId !== null && scoped.includes(total.keyId)));
    const names = new UsageNames(storage);
    const keyNames = new Map(await Promise.all([...new Set(totals.map((total) => total.keyId))].map(async (id) => [id, id === null ? null : await names.key(id)] as const)));
    sendJson(context, 200, {
      data: totals.map((total) => ({
        date: new Date(total.day).toISOString().slice(0, 10),
        model: total.model,
        key_id: total.keyId,
        key_name: keyNames.get(total.keyId) ?? null,
        requests: total.requests,
        errors: total.errors,
        input_tokens: total.inputTokens,
        output_tokens: total.outputTokens,
        cost_usd: nanoToUsd(total.costNano),
      })),
    } satisfies DailyUsageListJson);
  } },

  { method: 'GET', path: '/api/overview', who: 'member', permission: 'account:read', handler: ({ storage, clock, ledger, usageLog }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const now = clock.now();
    await usageLog.flush();
    const dayStart = now - (now % DAY_MS);
    const scoped = await scopedKeyIds(storage, accountId, active.projects);
    const [balance, subscriptions, allToday] = await Promise.all([
      ledger.availableBalance(accountId),
      storage.subscriptions.listByAccount(accountId),
      storage.usage.dailyTotals({ accountId, from: dayStart, to: now }),
    ]);
    // A member scoped to projects sees their projects' spend only.
    const today = allToday.filter((total) => scoped === null || (total.keyId !== null && scoped.includes(total.keyId)));
    const shown: OverviewJson['subscriptions'] = [];
    for (const subscription of subscriptions) {
      // Read at `now` as the admin API does; a subscription whose plan is gone has no quota left to show.
      const plan = await storage.plans.getById(subscription.planId);
      if (plan === null) continue;
      const view = subscriptionAt(subscription, plan, now);
      if (view.status !== 'active') continue;
      const remaining = plan.quotaNano > view.usedNano ? plan.quotaNano - view.usedNano : 0n;
      shown.push({
        id: view.id, plan: plan.name, period_end: isoTime(view.currentPeriodEnd), quota_usd: nanoToUsd(plan.quotaNano), used_usd: nanoToUsd(view.usedNano), remaining_usd: nanoToUsd(remaining),
      });
    }
    sendJson(context, 200, {
      balance_usd: nanoToUsd(balance),
      subscriptions: shown,
      spend_today_usd: nanoToUsd(today.reduce((sum, total) => sum + total.costNano, 0n)),
      requests_today: today.reduce((sum, total) => sum + total.requests, 0),
    } satisfies OverviewJson);
  } },
]);
