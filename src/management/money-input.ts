import { z } from 'zod';
import { MoneyFormatError, usdToNano } from '../billing/money.js';

/** The largest amount accepted anywhere (one billion USD), well inside a signed 64-bit count of nano-USD. */
const MAX_ABSOLUTE_NANO = 1_000_000_000n * 1_000_000_000n;

/** USD as a JSON number or decimal string, converted exactly to nano-USD. */
export const usdInput = z.union([z.number(), z.string()]).transform((value, context) => {
  try {
    const nano = usdToNano(value);
    if (nano > MAX_ABSOLUTE_NANO || nano < -MAX_ABSOLUTE_NANO) {
      context.addIssue({ code: 'custom', message: 'must be at most 1000000000 USD in absolute value' });
      return z.NEVER;
    }
    return nano;
  } catch (error) {
    context.addIssue({ code: 'custom', message: error instanceof MoneyFormatError ? error.message : 'must be a USD amount' });
    return z.NEVER;
  }
});

export const nonNegativeUsdInput = usdInput.refine((nano) => nano >= 0n, 'must not be negative');
