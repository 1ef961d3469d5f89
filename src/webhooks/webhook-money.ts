import { nanoToDecimalString } from '../billing/money.js';

/** An amount as events carry it: exact decimal USD and integer nano-USD, both strings (never a float). */
export function moneyFields(name: string, nano: bigint): Record<string, string> {
  return { [`${name}_usd`]: nanoToDecimalString(nano), [`${name}_nano`]: nano.toString() };
}
