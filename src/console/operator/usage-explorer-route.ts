import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import type { UsageQuery } from '../../domain/usage-records.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { usageQueryFrom } from '../../management/usage-input.js';
import type { Storage } from '../../storage/storage.js';
import { InvalidCursorError } from '../../storage/usage-cursor.js';
import type { ConsoleDeps } from '../console-deps.js';
import { UsageNames } from '../usage-names.js';
import { consoleRoutes } from '../console-route-table.js';
import type { OperatorUsagePageJson } from '../../contract/usage.js';

/** Keys of one account read at most to find those with a name. */
const MAX_KEYS = 5000;
/** A filter no row matches (a named account, key or channel that does not exist). */
const NOTHING: UsageQuery = { keyIds: [] };

/**
 * The usage filters by name as well as by id: `email` (the account's), `key` (a key's name, within the account named
 * by `email` or `account_id`; every key of that name), `channel` (a channel's name or id), besides the admin API's.
 */
export async function namedUsageQuery(storage: Storage, query: URLSearchParams): Promise<UsageQuery> {
  const filter = usageQueryFrom(query);
  const email = query.get('email')?.trim().toLowerCase() ?? '';
  if (email !== '') {
    const account = await storage.accounts.getByEmail(email);
    if (account === null || (filter.accountId !== undefined && filter.accountId !== account.id)) return NOTHING;
    filter.accountId = account.id;
  }
  const keyName = query.get('key')?.trim() ?? '';
  if (keyName !== '') {
    if (filter.accountId === undefined) throw new GatewayError('bad_request', "'key' (a key's name) needs the account: give 'email' or 'account_id' too, or use 'key_id'.", { param: 'key' });
    const ids: string[] = [];
    let after: string | null = null;
    let read = 0;
    do {
      const page = await storage.keys.listByAccount(filter.accountId, { limit: 200, after });
      ids.push(...page.data.filter((key) => key.name === keyName).map((key) => key.id));
      read += page.data.length;
      after = page.nextCursor;
    } while (after !== null && read < MAX_KEYS);
    filter.keyIds = ids;
  }
  const channel = query.get('channel')?.trim() ?? '';
  if (channel !== '') {
    const found = (await storage.channels.getById(channel)) ?? (await storage.channels.getByName(channel));
    if (found === null) return NOTHING;
    filter.channelId = found.id;
  }
  return filter;
}

/** The whole deployment's usage log for the operator's explorer: rows with the names behind their ids. */
export const USAGE_EXPLORER_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, usageLog } = deps.services;
  return { deps, storage, usageLog };
}, [
  { method: 'GET', path: '/api/operator/usage', who: 'operator', permission: 'read', handler: ({ storage, usageLog }) => async ({ context }) => {
    const filter = await namedUsageQuery(storage, context.query);
    const page = pageRequestFrom(context.query);
    await usageLog.flush();
    let found;
    try {
      found = await storage.usage.query(filter, page);
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new GatewayError('bad_request', "'cursor' is not a cursor this endpoint returned.", { param: 'cursor' });
      throw error;
    }
    const names = new UsageNames(storage);
    const rows = await Promise.all(found.data.map((row) => names.operatorRowJson(row)));
    const answer: OperatorUsagePageJson = pageJson({ data: rows, nextCursor: found.nextCursor }, (row) => row);
    sendJson(context, 200, answer);
  } },
]);
