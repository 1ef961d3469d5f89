import { centsToUsdText } from '../payments/top-up-price.js';
import type { Invoice, InvoiceParty } from '../domain/commerce-records.js';

const LEFT = 50;
const RIGHT = 545;
const AMOUNT_WIDTH = 110;

function money(cents: number, currency: string): string {
  return `${centsToUsdText(cents)} ${currency.toUpperCase()}`;
}

function partyLines(party: InvoiceParty): string[] {
  return [
    party.name,
    ...party.addressLines,
    ...(party.country === null ? [] : [party.country]),
    ...(party.taxId === null ? [] : [`Tax ID: ${party.taxId}`]),
    ...(party.email === null ? [] : [party.email]),
  ];
}

function percentText(basisPoints: number): string {
  const whole = Math.floor(basisPoints / 100);
  const fraction = basisPoints % 100;
  return fraction === 0 ? `${whole}` : `${whole}.${String(fraction).padStart(2, '0').replace(/0$/, '')}`;
}

/** The invoice or credit note as an A4 PDF (pdfkit's built-in Helvetica); its dates are the invoice's, so it renders the same every time. */
export async function renderInvoicePdf(invoice: Invoice): Promise<Buffer> {
  // Loaded on the first invoice rendered, not at start-up: pdfkit and its fonts are ~6 MiB of heap few processes need.
  const { default: PDFDocument } = await import('pdfkit');
  const issued = new Date(invoice.issuedAt);
  const title = invoice.kind === 'invoice' ? 'Invoice' : 'Credit note';
  const document = new PDFDocument({
    size: 'A4',
    margin: LEFT,
    info: { Title: `${title} ${invoice.number}`, Author: invoice.seller.name, CreationDate: issued, ModDate: issued },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    document.on('data', (chunk: Buffer) => chunks.push(chunk));
    document.on('end', () => resolve(Buffer.concat(chunks)));
    document.on('error', reject);
  });

  document.font('Helvetica-Bold').fontSize(20).text(title, LEFT, 50);
  document.font('Helvetica').fontSize(10)
    .text(`Number: ${invoice.number}`)
    .text(`Date of issue: ${issued.toISOString().slice(0, 10)}`);
  if (invoice.correctsInvoiceId !== null) document.text('Corrects the invoice named in its line below.');

  const partiesTop = 140;
  document.font('Helvetica-Bold').text('Seller', LEFT, partiesTop);
  document.font('Helvetica').text(partyLines(invoice.seller).join('\n'), LEFT, partiesTop + 14, { width: 230 });
  document.font('Helvetica-Bold').text('Bill to', 310, partiesTop);
  document.font('Helvetica').text(partyLines(invoice.buyer).join('\n'), 310, partiesTop + 14, { width: 235 });

  let y = Math.max(document.y, partiesTop + 90) + 20;
  document.font('Helvetica-Bold').text('Description', LEFT, y).text('Amount', RIGHT - AMOUNT_WIDTH, y, { width: AMOUNT_WIDTH, align: 'right' });
  y += 16;
  document.moveTo(LEFT, y).lineTo(RIGHT, y).stroke();
  y += 6;
  document.font('Helvetica');
  for (const line of invoice.lines) {
    const description = line.quantity === 1 ? line.description : `${line.description} × ${line.quantity}`;
    document.text(description, LEFT, y, { width: RIGHT - LEFT - AMOUNT_WIDTH - 10 });
    const next = document.y;
    document.text(money(line.amountCents, invoice.currency), RIGHT - AMOUNT_WIDTH, y, { width: AMOUNT_WIDTH, align: 'right' });
    y = Math.max(next, document.y) + 4;
  }
  document.moveTo(LEFT, y).lineTo(RIGHT, y).stroke();
  y += 8;
  const totalRow = (label: string, cents: number, bold = false): void => {
    document.font(bold ? 'Helvetica-Bold' : 'Helvetica').text(label, LEFT + 250, y, { width: RIGHT - LEFT - 250 - AMOUNT_WIDTH - 10, align: 'right' });
    document.text(money(cents, invoice.currency), RIGHT - AMOUNT_WIDTH, y, { width: AMOUNT_WIDTH, align: 'right' });
    y += 16;
  };
  totalRow('Subtotal', invoice.subtotalCents);
  if (invoice.tax !== null) totalRow(`${invoice.tax.label} (${percentText(invoice.tax.rateBasisPoints)} %)`, invoice.taxCents);
  totalRow('Total', invoice.totalCents, true);

  document.font('Helvetica').fontSize(8).fillColor('#555555')
    .text(invoice.kind === 'invoice' ? 'Paid by card. Prepaid credit for the use of the gateway.' : 'Refunded to the card the invoice was paid with.', LEFT, y + 20);
  document.end();
  return done;
}
