import { webhookEvent } from '../../domain/webhook-events.js';
import { insertWebhookEvent, webhookTablesOf } from './webhook-repository.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Invoice, InvoiceDraft } from '../../domain/commerce-records.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import { toNumber } from '../convert.js';
import { pageLimit, toPage } from '../pagination.js';
import type { Page, PageRequest } from '../../domain/records.js';
import { invoiceRow, toInvoice } from './commerce-rows.js';

export interface InvoiceRepository {
  /** Issues the draft with the next number of its series, in a transaction of its own. */
  issue(draft: InvoiceDraft): Promise<Invoice>;
  getById(id: string): Promise<Invoice | null>;
  getBySource(source: string): Promise<Invoice | null>;
  /** Newest first; `after` is the id of the last invoice of the previous page. */
  listByAccount(accountId: string, page: PageRequest): Promise<Page<Invoice>>;
  /** Every invoice of a series in number order (audits and tests). */
  listSeries(series: string): Promise<Invoice[]>;
}

/** `INV-000042`: the series and its sequence, zero-padded to six digits (more digits once past 999999). */
export function invoiceNumber(series: string, sequence: number): string {
  return `${series}-${String(sequence).padStart(6, '0')}`;
}

/**
 * Takes the next number of the draft's series and stores the invoice, inside the caller's transaction: the counter
 * row is updated in the same transaction, so a rolled-back issue leaves no gap and concurrent issuers (other
 * processes included) queue on the counter row (PostgreSQL) or the database write lock (SQLite).
 */
export async function issueInvoiceIn(trx: Transaction<CommerceDatabase>, draft: InvoiceDraft): Promise<Invoice> {
  await trx.insertInto('invoice_counters').values({ series: draft.series, last_number: 0 }).onConflict((conflict) => conflict.column('series').doNothing()).execute();
  const counter = await trx
    .updateTable('invoice_counters')
    .set({ last_number: sql<number>`${sql.ref('last_number')} + 1` })
    .where('series', '=', draft.series)
    .returning('last_number')
    .executeTakeFirstOrThrow();
  const sequence = toNumber(counter.last_number);
  const invoice: Invoice = { ...draft, sequence, number: invoiceNumber(draft.series, sequence) };
  await trx.insertInto('invoices').values(invoiceRow(invoice)).execute();
  await insertWebhookEvent(webhookTablesOf(trx), webhookEvent('invoice.issued', invoice.id, invoice.accountId, {
    invoice_id: invoice.id, number: invoice.number, kind: invoice.kind, currency: invoice.currency,
    subtotal_cents: invoice.subtotalCents, tax_cents: invoice.taxCents, total_cents: invoice.totalCents,
    corrects_invoice_id: invoice.correctsInvoiceId,
  }, invoice.issuedAt));
  return invoice;
}

export function createInvoiceRepository(db: Kysely<CommerceDatabase>): InvoiceRepository {
  return {
    issue(draft) {
      return db.transaction().execute((trx) => issueInvoiceIn(trx, draft));
    },

    async getById(id) {
      const row = await db.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toInvoice(row);
    },

    async getBySource(source) {
      const row = await db.selectFrom('invoices').selectAll().where('source', '=', source).executeTakeFirst();
      return row === undefined ? null : toInvoice(row);
    },

    async listByAccount(accountId, page) {
      const limit = pageLimit(page);
      let query = db.selectFrom('invoices').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').limit(limit + 1);
      if (page.after != null) query = query.where('id', '<', page.after);
      const rows = await query.execute();
      return toPage(rows.map(toInvoice), limit, (invoice) => invoice.id);
    },

    async listSeries(series) {
      const rows = await db.selectFrom('invoices').selectAll().where('series', '=', series).orderBy('sequence').execute();
      return rows.map(toInvoice);
    },
  };
}
