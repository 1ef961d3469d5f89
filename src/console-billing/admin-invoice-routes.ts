import { GatewayError } from '../errors/gateway-error.js';
import { adminOnly } from '../http/admin/admin-guard.js';
import type { Router } from '../http/router.js';
import { sendJson, sendRaw } from '../http/respond.js';
import { renderInvoicePdf } from '../invoices/invoice-pdf.js';
import { pageJson, pageRequestFrom } from '../management/pagination.js';
import type { GatewayServices } from '../services.js';
import { invoiceJson } from './json.js';

/** The operator's view of issued invoices and credit notes (read only: issued invoices never change). */
export function addInvoiceAdminRoutes(router: Router, services: GatewayServices): void {
  const { storage } = services;
  const requireInvoice = async (id: string) => {
    const invoice = await storage.invoices.getById(id);
    if (invoice === null) throw new GatewayError('not_found', `No invoice with id '${id}'.`);
    return invoice;
  };
  router.add('GET', '/admin/accounts/:id/invoices', adminOnly(services, async (context) => {
    const accountId = context.params.id ?? '';
    if ((await storage.accounts.getById(accountId)) === null) throw new GatewayError('not_found', `No account with id '${accountId}'.`);
    const page = await storage.invoices.listByAccount(accountId, pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, (invoice) => ({ ...invoiceJson(invoice), account_id: invoice.accountId, pdf_url: `/admin/invoices/${encodeURIComponent(invoice.id)}/pdf` })));
  }));
  router.add('GET', '/admin/invoices/:id', adminOnly(services, async (context) => {
    const invoice = await requireInvoice(context.params.id ?? '');
    sendJson(context, 200, { ...invoiceJson(invoice), account_id: invoice.accountId, pdf_url: `/admin/invoices/${encodeURIComponent(invoice.id)}/pdf` });
  }));
  router.add('GET', '/admin/invoices/:id/pdf', adminOnly(services, async (context) => {
    const invoice = await requireInvoice(context.params.id ?? '');
    sendRaw(context, 200, await renderInvoicePdf(invoice), 'application/pdf', { 'content-disposition': `attachment; filename="${invoice.number}.pdf"` });
  }));
}
