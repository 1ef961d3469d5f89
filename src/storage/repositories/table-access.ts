import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database } from '../database-schema.js';
import { chunk, pageLimit, rowsPerStatement, toPage } from '../pagination.js';
import type { Page, PageRequest } from '../../domain/records.js';

/**
 * How one table's rows become a repository's records and back: the table, its key column (the one lookups,
 * updates, deletes and pages go by), and the three mappings each repository owns.
 */
export interface TableMapping<TableName extends keyof Schema & string, Entity, Patch, Schema = Database> {
  table: TableName;
  key: KeyColumn<Schema, TableName>;
  keyOf(entity: Entity): string;
  toRecord(row: Selectable<Schema[TableName]>): Entity;
  toRow(entity: Entity): Insertable<Schema[TableName]>;
  /** The columns a patch changes, `updated_at` among them; absent for tables whose rows are never edited. */
  toChanges?(patch: Patch, now: number): Updateable<Schema[TableName]>;
}

type KeyColumn<Schema, TableName extends keyof Schema> = keyof Schema[TableName] & string;

/** Equality filters on columns of the table (every one must hold). */
export type ColumnFilter<TableName extends keyof Schema & string, Schema = Database> = Partial<Record<KeyColumn<Schema, TableName>, string | number>>;

/**
 * Get, list, insert, update and delete by key for one table, through its mapping. "Not found" is null or false.
 * `Schema` is the core schema or one that extends it (projects, commerce, webhooks).
 */
export interface TableAccess<TableName extends keyof Schema & string, Entity, Patch, Schema = Database> {
  insert(entity: Entity): Promise<void>;
  /** By the key column. */
  get(key: string): Promise<Entity | null>;
  /** The rows of these keys, in key order (a key with no row is left out); as few statements as the bind limit allows. */
  getMany(keys: readonly string[]): Promise<Entity[]>;
  /** The one row whose (unique) column holds the value. */
  getBy(column: KeyColumn<Schema, TableName>, value: string): Promise<Entity | null>;
  /** A page in key order; `after` is the previous page's last key. */
  page(request: PageRequest, filter?: ColumnFilter<TableName, Schema>): Promise<Page<Entity>>;
  /** Every row in key order (small tables: routing and limits snapshots). */
  listAll(filter?: ColumnFilter<TableName, Schema>): Promise<Entity[]>;
  update(key: string, patch: Patch, now: number): Promise<Entity | null>;
  delete(key: string): Promise<boolean>;
}

/**
 * The statements take the table and column by name, which Kysely's typed builders cannot follow through a generic
 * table; they run on an untyped view of the same connection, and the mapping's types are checked at its edges.
 */
type UntypedDatabase = Record<string, Record<string, unknown>>;

/** `db` may be a transaction: the statements then run inside it. */
export function tableAccess<Schema, TableName extends keyof Schema & string, Entity, Patch>(
  db: Kysely<Schema> | Transaction<Schema>,
  mapping: TableMapping<TableName, Entity, Patch, NoInfer<Schema>>,
): TableAccess<TableName, Entity, Patch, Schema> {
  const untyped = db as unknown as Kysely<UntypedDatabase>;
  const table: string = mapping.table;
  const key: string = mapping.key;
  const toRecord = (row: Record<string, unknown>): Entity => mapping.toRecord(row as Selectable<Schema[TableName]>);
  const select = (filter: ColumnFilter<TableName, Schema> | undefined) => {
    let query = untyped.selectFrom(table).selectAll().orderBy(key);
    for (const [column, value] of Object.entries(filter ?? {})) query = query.where(column, '=', value);
    return query;
  };

  const getBy = async (column: string, value: string): Promise<Entity | null> => {
    const row = await untyped.selectFrom(table).selectAll().where(column, '=', value).executeTakeFirst();
    return row === undefined ? null : toRecord(row);
  };

  return {
    async insert(entity) {
      await untyped.insertInto(table).values(mapping.toRow(entity) as Record<string, unknown>).execute();
    },

    get: (value) => getBy(key, value),
    getBy,

    async getMany(values) {
      const records: Entity[] = [];
      for (const part of chunk([...new Set(values)], rowsPerStatement(1))) {
        const rows = await select(undefined).where(key, 'in', part).execute();
        records.push(...rows.map(toRecord));
      }
      return records;
    },

    async page(request, filter) {
      const limit = pageLimit(request);
      let query = select(filter).limit(limit + 1);
      if (request.after != null) query = query.where(key, '>', request.after);
      const rows = await query.execute();
      return toPage(rows.map(toRecord), limit, mapping.keyOf);
    },

    async listAll(filter) {
      const rows = await select(filter).execute();
      return rows.map(toRecord);
    },

    async update(value, patch, now) {
      if (mapping.toChanges === undefined) throw new Error(`${table} rows are never updated`);
      const changes = mapping.toChanges(patch, now) as Record<string, unknown>;
      const row = await untyped.updateTable(table).set(changes).where(key, '=', value).returningAll().executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async delete(value) {
      const result = await untyped.deleteFrom(table).where(key, '=', value).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
