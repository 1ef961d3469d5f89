import { GatewayError } from '../../errors/gateway-error.js';
import type { RequestContext } from '../../http/request-context.js';
import { sendJson } from '../../http/respond.js';
import { nanoToUsd } from '../../billing/money.js';
import { csvLine } from '../../shared/csv.js';
import type { ConsoleDeps } from '../console-deps.js';
import { timeParam } from '../routes/usage-routes.js';
import { entryLine, HISTORY_CSV_COLUMNS, lineToJson, usageLine, withBalances, type HistoryLine } from './ledger-lines.js';
import { consoleRoutes } from '../console-route-table.js';
import type { TransactionHistoryJson } from '../../contract/billing.js';

const DAY_MS = 86_400_000;
/** The history spans at most this many days per request. */
const MAX_SPAN_DAYS = 400;
/** Entries other than usage read at most per request (`truncated` says when more exist). */
const MAX_ENTRIES = 5000;

interface History {
  from: number;
  to: number;
  openingNano: bigint;
  closingNano: bigint;
  lines: Array<HistoryLine & { balanceAfterNano: bigint }>;
  truncated: boolean;
}

/**
 * The account's money trail between `from` and `to` (default the last 30 days): every ledger entry, with a UTC day's
 * usage entries summed into one line, newest first, each with the balance after it. Opening and closing balances are
 * sums of the ledger, so the lines explain the change between them exactly.
 */
async function historyOf(deps: ConsoleDeps, context: RequestContext, accountId: string): Promise<History> {
  const { storage, clock, ledger, usageLog } = deps.services;
  const now = clock.now();
  const to = timeParam(context.query, 'to', now);
  const from = timeParam(context.query, 'from', to - 30 * DAY_MS);
  if (from > to) throw new GatewayError('bad_request', "'from' must not be after 'to'.", { param: 'from' });
  if (to - from > MAX_SPAN_DAYS * DAY_MS) throw new GatewayError('bad_request', `The range spans at most ${MAX_SPAN_DAYS} days.`, { param: 'from' });
  // Charges queued in memory are written first, so the history ends where the balance is.
  await usageLog.flush();
  await ledger.flush();
  const end = to + 1;
  const lines: HistoryLine[] = [];
  let after: string | null = null;
  let truncated = false;
  do {
    const page = await storage.ledger.listByAccount(accountId, { limit: 200, after }, { order: 'desc', excludeKinds: ['usage'], from, to: end });
    lines.push(...page.data.map(entryLine));
    after = page.nextCursor;
    if (after !== null && lines.length >= MAX_ENTRIES) truncated = true;
  } while (after !== null && !truncated);
  // A cut list starts at its oldest entry (the next request asks for the time before it), usage included.
  const start = truncated ? Math.max(from, (lines[lines.length - 1] as HistoryLine).at) : from;
  const kept = lines.filter((line) => line.at >= start);
  for (const day of await storage.ledger.dailyUsage(accountId, start, end)) kept.push(usageLine(day));
  const [openingNano, closingNano] = await Promise.all([storage.ledger.sumByAccount(accountId, start), storage.ledger.sumByAccount(accountId, end)]);
  return { from: start, to, openingNano, closingNano, lines: withBalances(kept, closingNano), truncated };
}

/** The account's transaction history (JSON and CSV) for the people who read its balance. */
export const TRANSACTION_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  return { deps };
}, [
  { method: 'GET', path: '/api/console/transactions', who: 'member', permission: 'billing:read', handler: ({ deps }) => async ({ context, active }) => {
    const history = await historyOf(deps, context, active.session.accountId);
    const answer: TransactionHistoryJson = {
      object: 'list',
      from: new Date(history.from).toISOString(),
      to: new Date(history.to).toISOString(),
      opening_balance_usd: nanoToUsd(history.openingNano),
      closing_balance_usd: nanoToUsd(history.closingNano),
      truncated: history.truncated,
      data: history.lines.map(lineToJson),
    };
    sendJson(context, 200, answer);
  } },

  { method: 'GET', path: '/api/console/transactions.csv', who: 'member', permission: 'billing:read', handler: ({ deps }) => async ({ context, active }) => {
    const history = await historyOf(deps, context, active.session.accountId);
    const response = context.response;
    response.statusCode = 200;
    response.setHeader('content-type', 'text/csv; charset=utf-8');
    response.setHeader('content-disposition', `attachment; filename="transactions-${new Date(history.to).toISOString().slice(0, 10)}.csv"`);
    let body = `${HISTORY_CSV_COLUMNS.join(',')}\r\n`;
    for (const line of history.lines) {
      const json = lineToJson(line);
      body += csvLine(HISTORY_CSV_COLUMNS.map((column) => json[column]));
    }
    response.end(body);
  } },
]);
