import { GatewayError } from '../errors/gateway-error.js';
import { sendJson, sendRaw } from '../http/respond.js';
import { renderInvoicePdf } from '../invoices/invoice-pdf.js';
import { pageJson, pageRequestFrom } from '../management/pagination.js';
import type { GatewayServices } from '../services.js';
import { invoiceJson } from './json.js';
import { adminRoutes } from '../http/admin/admin-route.js';

/** The operator's view of issued invoices and credit notes (read only: issued invoices never change). */
export const INVOICE_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage } = services;
  const requireInvoice = async (id: string) => {
    const invoice = await storage.invoices.getById(id);
    if (invoice === null) throw new GatewayError('not_found', `No invoice with id '${id}'.`);
    return invoice;
  };
  return { services, storage, requireInvoice };
}, [
  { method: 'GET', path: '/admin/accounts/:id/invoices', handler: ({ storage }) => async (context) => {
    const accountId = context.params.id ?? '';
    if ((await storage.accounts.getById(accountId)) === null) throw new GatewayError('not_found', `No account with id '${accountId}'.`);
    const page = await storage.invoices.listByAccount(accountId, pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, (invoice) => ({ ...invoiceJson(invoice), account_id: invoice.accountId, pdf_url: `/admin/invoices/${encodeURIComponent(invoice.id)}/pdf` })));
  } },
  { method: 'GET', path: '/admin/invoices/:id', handler: ({ requireInvoice }) => async (context) => {
    const invoice = await requireInvoice(context.params.id ?? '');
    sendJson(context, 200, { ...invoiceJson(invoice), account_id: invoice.accountId, pdf_url: `/admin/invoices/${encodeURIComponent(invoice.id)}/pdf` });
  } },
  { method: 'GET', path: '/admin/invoices/:id/pdf', handler: ({ requireInvoice }) => async (context) => {
    const invoice = await requireInvoice(context.params.id ?? '');
    sendRaw(context, 200, await renderInvoicePdf(invoice), 'application/pdf', { 'content-disposition': `attachment; filename="${invoice.number}.pdf"` });
  } },
]);
