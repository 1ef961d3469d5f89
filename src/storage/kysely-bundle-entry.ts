// The entry vite bundles into dist/vendor/kysely.js (scripts/vendor.vite.config.ts): kysely's entry and its migration API,
// whose runtime exports its entry leaves out, so that the one bundle answers for both `kysely` and `kysely/migration`.
export * from 'kysely';
export { DEFAULT_ALLOW_UNORDERED_MIGRATIONS, DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, FileMigrationProvider, MIGRATION_LOCK_ID, Migrator, NO_MIGRATIONS } from 'kysely/migration';
