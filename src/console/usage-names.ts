import type { UsageLogRow } from '../domain/usage-records.js';
import type { Storage } from '../storage/storage.js';
import { usageRowToJson } from '../management/usage-input.js';
import type { ConsoleUsageRowJson, OperatorUsageRowJson } from '../contract/usage.js';

/** The name a playground key shows under (its stored name is `playground` too). */
const PLAYGROUND = 'Playground';

/**
 * Names for the ids a usage row carries: the account's email, the key's name and the channel's name, each read once
 * per answer. A row whose key, account or channel is gone keeps its id and gets `null`.
 */
export class UsageNames {
  readonly #storage: Storage;
  readonly #accounts = new Map<string, Promise<string | null>>();
  readonly #keys = new Map<string, Promise<string | null>>();
  readonly #channels = new Map<string, Promise<string | null>>();

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  account(id: string): Promise<string | null> {
    return memo(this.#accounts, id, async () => {
      const account = await this.#storage.accounts.getById(id);
      return account === null || account.deletedAt !== null ? null : account.email;
    });
  }

  key(id: string): Promise<string | null> {
    return memo(this.#keys, id, async () => {
      const key = await this.#storage.keys.getById(id);
      return key === null ? null : key.playground ? PLAYGROUND : key.name;
    });
  }

  channel(id: string): Promise<string | null> {
    return memo(this.#channels, id, async () => (await this.#storage.channels.getById(id))?.name ?? null);
  }

  /** The row as the API shows it, with `key_name` (and for operators `account_email` and `channel_name`). */
  /** The row as the account's usage page shows it: the key's name beside its id. */
  async rowJson(row: UsageLogRow): Promise<ConsoleUsageRowJson> {
    return { ...usageRowToJson(row), key_name: row.keyId === null ? null : await this.key(row.keyId) };
  }

  /** The row as the operator's usage explorer shows it: the account's email and the channel's name too. */
  async operatorRowJson(row: UsageLogRow): Promise<OperatorUsageRowJson> {
    return {
      ...await this.rowJson(row),
      account_email: row.accountId === null ? null : await this.account(row.accountId),
      channel_name: row.channelId === null ? null : await this.channel(row.channelId),
    };
  }
}

function memo(cache: Map<string, Promise<string | null>>, id: string, read: () => Promise<string | null>): Promise<string | null> {
  let known = cache.get(id);
  if (known === undefined) cache.set(id, (known = read()));
  return known;
}
