import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledQuery, PostgresDialect, SqliteAdapter, SqliteDialect, SqliteDriver } from 'kysely';
import type { DatabaseConnection, Dialect, DialectAdapter, Driver, SqliteDatabase, SqliteDialectConfig } from 'kysely';
import type pg from 'pg';
import type { SQLInputValue } from 'node:sqlite';
import { openSqliteConnection, type SqliteConnection, type SqliteStatement } from './sqlite-connection.js';

/** How many prepared SQLite statements to keep (Kysely would otherwise prepare every query anew). */
const STATEMENT_CACHE_SIZE = 500;
const POSTGRES_POOL_SIZE = 10;
/** A request waits no longer than this for a database connection while the server is away. */
const POSTGRES_CONNECT_TIMEOUT_MS = 5000;
const INT8_TYPE_ID = 20;

/** SQLite transactions take the write lock up front (`begin immediate`), so `busy_timeout` applies to them. */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * SQLite's DDL is transactional, so the migrator runs all pending migrations in one transaction, which the driver
 * opens with `begin immediate`: a second process starting at the same time waits for the file's write lock, then
 * finds every migration applied.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** Kysely's view of one prepared statement: positional parameters as an array, rows read or a write run. */
function kyselyStatement(statement: SqliteStatement): ReturnType<SqliteDatabase['prepare']> {
  const reader = statement.columns().length > 0;
  return {
    reader,
    all: (parameters) => statement.all(...(parameters as SqliteParameter[])),
    run: (parameters) => statement.run(...(parameters as SqliteParameter[])),
    iterate: (parameters) => statement.iterate(...(parameters as SqliteParameter[])),
  };
}

/** A positional parameter: Kysely passes strings, numbers, bigints, byte arrays and nulls. */
type SqliteParameter = SQLInputValue;

/** Wraps a SQLite connection so Kysely reuses prepared statements (bounded, least recently used out). */
function withStatementCache(database: SqliteConnection): SqliteDatabase {
  const cache = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  return {
    close() {
      cache.clear();
      database.close();
    },
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement === undefined) {
        statement = kyselyStatement(database.prepare(sql));
        if (cache.size >= STATEMENT_CACHE_SIZE) {
          const oldest = cache.keys().next();
          if (oldest.done !== true) cache.delete(oldest.value);
        }
      } else {
        cache.delete(sql);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** A SQLite database: the Kysely dialect over it, and the connection itself for synchronous batch writes. */
export interface SqliteHandle {
  dialect: Dialect;
  database: SqliteConnection;
}

/** Which batched write held the event loop. */
export type SqliteWriter = 'usage' | 'money' | 'checkpoints';

/**
 * Told of each synchronous SQLite write transaction: how long it held the event loop (seconds) and how many rows it
 * wrote (usage rows, settlements and reservations, checkpoints).
 */
export type SqliteWriteObserver = (writer: SqliteWriter, seconds: number, rows: number) => void;

/** Synchronous work on the SQLite connection, in one immediate transaction of its own. */
export interface SqliteBatches {
  database: SqliteConnection;
  run<T>(work: () => T): Promise<T>;
  observe: SqliteWriteObserver;
}

/**
 * Opens a SQLite file with 64-bit integers read as bigint, WAL, foreign keys and a busy timeout. Directories it makes are the owner's alone
 * (0700), and so is a new database file (0600; SQLite gives its -wal and -shm files the database file's mode).
 */
export function openSqlite(path: string): SqliteHandle {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'a', 0o600));
  }
  const database = openSqliteConnection(path);
  try {
    database.exec('pragma journal_mode = WAL');
    database.exec('pragma synchronous = NORMAL');
  } catch (error) {
    database.close();
    throw error;
  }
  return { dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }), database };
}

/** INT8 (bigint, count(*)) becomes a JS bigint; every other type keeps pg's default parser. */
function postgresTypes(types: typeof pg.types): pg.CustomTypesConfig {
  return {
    getTypeParser: ((typeId: number, format?: 'text' | 'binary') => {
      if (typeId === INT8_TYPE_ID && format !== 'binary') return (value: string) => BigInt(value);
      return types.getTypeParser(typeId, format);
    }) as pg.CustomTypesConfig['getTypeParser'],
  };
}

/** The pool (and the pg driver, ~3 MiB of heap a SQLite gateway never needs) is made on the first query. */
export function createPostgresDialect(connectionString: string): Dialect {
  return new PostgresDialect({
    pool: async () => {
      const { default: driver } = await import('pg');
      const pool = new driver.Pool({ connectionString, max: POSTGRES_POOL_SIZE, types: postgresTypes(driver.types), connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS });
      // A client that loses its connection emits 'error': on the pool while idle, on the client itself while checked
      // out. Either way pg discards that client and the query in flight (or the next one) fails and is answered 503,
      // so neither event may crash the process as an unhandled 'error'.
      pool.on('error', () => {});
      pool.on('connect', (client) => {
        client.on('error', () => {});
      });
      return pool;
    },
  });
}
