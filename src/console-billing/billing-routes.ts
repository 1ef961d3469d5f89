import { z } from 'zod';
import { nanoToUsd } from '../billing/money.js';
import { GatewayError } from '../errors/gateway-error.js';
import { renderInvoicePdf } from '../invoices/invoice-pdf.js';
import { readJsonObject } from '../http/read-body.js';
import { sendJson, sendRaw } from '../http/respond.js';
import { pageJson, pageRequestFrom } from '../management/pagination.js';
import { parseInput } from '../management/parse-input.js';
import { requirePermission, type BillingRouteDeps } from './console-actor.js';
import { consoleBase } from './console-base.js';
import { billingProfileJson, centsToUsd, checkoutJson, invoiceJson } from './json.js';
import { consoleRoutes } from '../console/console-route-table.js';
import type { BillingJson, InvoicePageJson, OpenedCheckoutJson } from '../contract/billing.js';

const BODY_LIMIT = 64 * 1024;

const profileSchema = z.object({
  name: z.string().trim().min(1).max(200),
  address: z.string().trim().min(1).max(1000),
  country: z.string().trim().regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code').transform((code) => code.toUpperCase()),
  tax_id: z.string().trim().min(1).max(64).nullable().optional(),
  email: z.email().max(254).nullable().optional(),
}).strict();

const checkoutSchema = z.object({ amount_usd: z.union([z.number(), z.string().max(32)]) }).strict();

/**
 * The console's money pages: balance and top-up options, the buyer's billing details, Stripe Checkout for card
 * top-ups, invoices (JSON and PDF); then referrals and support. Every route runs as the actor `authenticate`
 * resolves (the console's session layer), within that actor's account only.
 */
export const BILLING_CONSOLE_ROUTES = consoleRoutes(({ services, authenticate }: BillingRouteDeps) => {
  const { storage, clock, ledger } = services;
  const commerce = services.commerce;
  const topUp = commerce.config.topUp;

  const ownInvoice = async (accountId: string, id: string) => {
    const invoice = await storage.invoices.getById(id);
    if (invoice === null || invoice.accountId !== accountId) throw new GatewayError('not_found', `No invoice with id '${id}'.`);
    return invoice;
  };
  return { services, authenticate, storage, clock, ledger, commerce, topUp, ownInvoice };
}, [
  { method: 'GET', path: '/api/console/billing', who: 'caller', handler: ({ authenticate, storage, ledger, commerce, topUp }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:read');
    const [balance, sessions] = await Promise.all([ledger.availableBalance(actor.accountId), storage.payments.listSessions(actor.accountId, 20)]);
    sendJson(context, 200, {
      object: 'billing',
      account_id: actor.accountId,
      balance_usd: nanoToUsd(balance),
      // A negative balance (after a refund or dispute) refuses billed requests until a top-up makes it positive.
      can_spend: balance > 0n,
      card: commerce.checkout === null
        ? { enabled: false, how_to_enable: 'The operator enables card top-ups by setting STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (see docs/operators.md, "Payments").' }
        : {
          enabled: true,
          currency: 'usd',
          presets_usd: topUp.presetCents.map(centsToUsd),
          min_usd: centsToUsd(topUp.minimumCents),
          max_usd: centsToUsd(topUp.maximumCents),
          tax: commerce.config.tax === null ? null : { label: commerce.config.tax.label, rate_percent: commerce.config.tax.rateBasisPoints / 100 },
        },
      recent_top_ups: sessions.map(checkoutJson),
    } satisfies BillingJson);
  } },

  { method: 'GET', path: '/api/console/billing/profile', who: 'caller', handler: ({ authenticate, storage }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:read');
    sendJson(context, 200, billingProfileJson(await storage.billingProfiles.get(actor.accountId)));
  } },

  { method: 'PUT', path: '/api/console/billing/profile', who: 'caller', handler: ({ authenticate, storage, clock }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:write');
    await actor.requireProvenMailbox();
    const input = parseInput(profileSchema, await readJsonObject(context, BODY_LIMIT));
    const profile = { accountId: actor.accountId, name: input.name, address: input.address, country: input.country, taxId: input.tax_id ?? null, email: input.email ?? null, updatedAt: clock.now() };
    await storage.billingProfiles.put(profile);
    sendJson(context, 200, billingProfileJson(profile));
  } },

  { method: 'POST', path: '/api/console/billing/checkout', who: 'caller', handler: ({ services, authenticate, commerce }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:write');
    await actor.requireProvenMailbox();
    const input = parseInput(checkoutSchema, await readJsonObject(context, BODY_LIMIT));
    if (commerce.checkout === null) {
      throw new GatewayError('conflict', 'Card top-ups are not enabled on this gateway: the operator sets STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET.');
    }
    const opened = await commerce.checkout.open({
      accountId: actor.accountId, userId: actor.userId, amountUsd: input.amount_usd, consoleBase: consoleBase(services.config.consoleUrl, context),
    });
    sendJson(context, 201, { ...checkoutJson(opened.session), url: opened.url } satisfies OpenedCheckoutJson);
  } },

  { method: 'GET', path: '/api/console/billing/checkout/:id', who: 'caller', handler: ({ authenticate, storage }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:read');
    const session = await storage.payments.getSession(context.params.id ?? '');
    if (session === null || session.accountId !== actor.accountId) throw new GatewayError('not_found', 'No such top-up.');
    sendJson(context, 200, checkoutJson(session));
  } },

  { method: 'GET', path: '/api/console/billing/invoices', who: 'caller', handler: ({ authenticate, storage }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:read');
    const page = await storage.invoices.listByAccount(actor.accountId, pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, invoiceJson) satisfies InvoicePageJson);
  } },

  { method: 'GET', path: '/api/console/billing/invoices/:id', who: 'caller', handler: ({ authenticate, ownInvoice }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:read');
    sendJson(context, 200, invoiceJson(await ownInvoice(actor.accountId, context.params.id ?? '')));
  } },

  { method: 'GET', path: '/api/console/billing/invoices/:id/pdf', who: 'caller', handler: ({ authenticate, ownInvoice }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:read');
    const invoice = await ownInvoice(actor.accountId, context.params.id ?? '');
    const pdf = await renderInvoicePdf(invoice);
    sendRaw(context, 200, pdf, 'application/pdf', { 'content-disposition': `attachment; filename="${invoice.number}.pdf"`, 'cache-control': 'private, max-age=0' });
  } },
]);
