import { DatabaseSync, type StatementSync } from 'node:sqlite';

/** A connection to a SQLite file through Node's built-in SQLite (no native module to build or match to Node). */
export type SqliteConnection = DatabaseSync;
export type SqliteStatement = StatementSync;

/** How long a statement waits for another connection's write lock before it fails with SQLITE_BUSY (ms). */
const BUSY_TIMEOUT_MS = 5000;

export interface OpenSqliteConnectionOptions {
  readOnly?: boolean;
  /** Fail when the file does not exist instead of creating it. */
  mustExist?: boolean;
  busyTimeoutMs?: number;
}

/** A SQLite URI that opens an existing file only (`ro` or `rw`), never creating it; the path percent-encoded. */
export function existingFileUri(path: string, mode: 'ro' | 'rw'): string {
  return `file:${encodeURI(path).replace(/\?/g, '%3F').replace(/#/g, '%23')}?mode=${mode}`;
}

/**
 * Opens a connection whose integers are read as bigint (money and counters stay exact past 2^53), with foreign keys
 * enforced and a busy timeout.
 */
export function openSqliteConnection(path: string, options: OpenSqliteConnectionOptions = {}): SqliteConnection {
  const location = options.mustExist === true && path !== ':memory:' ? existingFileUri(path, options.readOnly === true ? 'ro' : 'rw') : path;
  return new DatabaseSync(location, {
    readOnly: options.readOnly ?? false,
    readBigInts: true,
    enableForeignKeyConstraints: true,
    timeout: options.busyTimeoutMs ?? BUSY_TIMEOUT_MS,
  });
}

/** The first column of a pragma's first row (`journal_mode`, `wal_autocheckpoint`, …), or undefined. */
export function pragmaValue(connection: SqliteConnection, pragma: string): unknown {
  const row = connection.prepare(`pragma ${pragma}`).get();
  return row === undefined ? undefined : Object.values(row)[0];
}

/**
 * Runs synchronous work in one `begin immediate` transaction (the write lock taken up front, so the busy timeout
 * applies): committed when it returns, rolled back when it throws.
 */
export function immediateTransaction<T>(connection: SqliteConnection, work: () => T): T {
  connection.exec('begin immediate');
  try {
    const result = work();
    connection.exec('commit');
    return result;
  } catch (error) {
    if (connection.isTransaction) connection.exec('rollback');
    throw error;
  }
}
