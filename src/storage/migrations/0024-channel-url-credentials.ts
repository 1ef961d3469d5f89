import { sql, type Kysely } from 'kysely';
import { withoutUrlCredentials } from '../../shared/url-credentials.js';

/**
 * A channel's `base_url` no longer takes a user name or password (`https://user:pw@host`): they were kept in clear,
 * shown to operator viewers and copied into the audit log, and never reached the upstream (requests go to the URL's
 * origin, which leaves them out). Stored channels lose them, and so do the audit log's before/after states.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const channels = await sql<{ id: string; base_url: string }>`SELECT id, base_url FROM channels WHERE base_url LIKE ${'%@%'}`.execute(db);
  for (const { id, base_url: baseUrl } of channels.rows) {
    const cleaned = withoutUrlCredentials(baseUrl);
    if (cleaned !== baseUrl) await sql`UPDATE channels SET base_url = ${cleaned} WHERE id = ${id}`.execute(db);
  }
  const entries = await sql<{ id: string; before_json: string | null; after_json: string | null }>`SELECT id, before_json, after_json FROM operator_audit_log
    WHERE before_json LIKE ${'%://%@%'} OR after_json LIKE ${'%://%@%'}`.execute(db);
  for (const entry of entries.rows) {
    const before = entry.before_json === null ? null : withoutUrlCredentials(entry.before_json);
    const after = entry.after_json === null ? null : withoutUrlCredentials(entry.after_json);
    if (before !== entry.before_json || after !== entry.after_json) {
      await sql`UPDATE operator_audit_log SET before_json = ${before}, after_json = ${after} WHERE id = ${entry.id}`.execute(db);
    }
  }
}

/** Nothing to undo: the credentials are gone, and an older release reads the cleaned URLs as they are. */
export async function down(): Promise<void> {}
