import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** Throughput limits created as 32-bit `integer`; tiers already hold them as `bigint`. */
const LIMIT_COLUMNS: ReadonlyArray<[table: string, columns: string[]]> = [
  ['api_keys', ['rpm', 'tpm', 'concurrency']],
  ['models', ['rpm', 'tpm']],
  ['plans', ['rpm', 'tpm']],
  ['accounts', ['concurrency']],
];

/**
 * RPM, TPM and concurrency limits become 64-bit on PostgreSQL, so any limit up to 2^53 - 1 that SQLite stores is
 * stored there too (a TPM of 10^12 overflowed `integer`). SQLite's INTEGER is 64-bit already: nothing to do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [table, columns] of LIMIT_COLUMNS) {
    const changes = columns.map((column) => sql`alter column ${sql.ref(column)} type bigint`);
    await sql`alter table ${sql.table(table)} ${sql.join(changes)}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [table, columns] of LIMIT_COLUMNS) {
    const changes = columns.map((column) => sql`alter column ${sql.ref(column)} type integer`);
    await sql`alter table ${sql.table(table)} ${sql.join(changes)}`.execute(db);
  }
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
