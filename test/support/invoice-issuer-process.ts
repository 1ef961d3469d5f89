/**
 * A separate process that issues invoices on a shared database, for the numbering test across processes:
 * `node dist/test/support/invoice-issuer-process.js <database url> <account id> <series> <count> <parallel>`.
 * Prints one JSON line: the sequences it was given.
 */
import { randomBytes } from 'node:crypto';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import type { InvoiceDraft } from '../../src/domain/commerce-records.js';
import { openStorage } from '../../src/storage/open-storage.js';

export function invoiceDraftFor(accountId: string, series: string, source: string): InvoiceDraft {
  return {
    id: newId('inv'),
    accountId,
    kind: 'invoice',
    series,
    source,
    correctsInvoiceId: null,
    currency: 'usd',
    seller: { name: 'Seller', addressLines: ['1 Street'], country: null, taxId: null, email: null },
    buyer: { name: 'Buyer', addressLines: [], country: 'DE', taxId: null, email: null },
    lines: [{ description: 'Prepaid account credit', quantity: 1, unitCents: 1000, amountCents: 1000 }],
    tax: null,
    subtotalCents: 1000,
    taxCents: 0,
    totalCents: 1000,
    issuedAt: Date.now(),
  };
}

async function main(): Promise<void> {
  const [url, accountId, series, countText, parallelText] = process.argv.slice(2);
  if (url === undefined || accountId === undefined || series === undefined) throw new Error('usage: <database url> <account id> <series> <count> <parallel>');
  const count = Number(countText ?? '50');
  const parallel = Number(parallelText ?? '4');
  const storage = await openStorage({ url, secretBox: new SecretBox(randomBytes(32)) });
  const sequences: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      const invoice = await storage.invoices.issue(invoiceDraftFor(accountId, series, `test:${process.pid}:${newId('src')}`));
      sequences.push(invoice.sequence);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  await storage.close();
  process.stdout.write(`${JSON.stringify({ pid: process.pid, sequences })}\n`);
}

if (process.argv[1]?.endsWith('invoice-issuer-process.js') === true) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  });
}
