import { z } from 'zod';
import { MoneyFormatError, usdToNano } from '../billing/money.js';

/** USD as a JSON number or decimal string, converted exactly to nano-USD. */
export const usdInput = z.union([z.number(), z.string()]).transform((value, context) => {
  try {
    return usdToNano(value);
  } catch (error) {
    context.addIssue({ code: 'custom', message: error instanceof MoneyFormatError ? error.message : 'must be a USD amount' });
    return z.NEVER;
  }
});

export const nonNegativeUsdInput = usdInput.refine((nano) => nano >= 0n, 'must not be negative');
