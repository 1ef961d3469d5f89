/** Where the database lives, parsed from a storage URL. */
export type StorageLocation =
  | { dialect: 'sqlite'; /** File path, or `:memory:`. */ path: string }
  | { dialect: 'postgres'; connectionString: string };

/**
 * Parses `sqlite:<path>` (`sqlite::memory:` for an in-memory database) or `postgres://…` / `postgresql://…`.
 * Throws on anything else.
 */
export function parseStorageUrl(url: string): StorageLocation {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new Error('Storage URL "sqlite:" needs a file path, e.g. sqlite:./data/gateway.db');
    return { dialect: 'sqlite', path };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { dialect: 'postgres', connectionString: url };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  throw new Error(
    `Unsupported storage URL${scheme === undefined ? '' : ` scheme "${scheme}:"`}: expected sqlite:<path> or postgres://…`,
  );
}
