import { useSyncExternalStore } from 'react';
import { useFx } from '../pages/billing/billing-queries';
import { SelectField } from '../ui/field';

/**
 * The currency the console shows prices and amounts in, chosen by the person in this browser. Money stays USD on
 * the server; other currencies are USD times the gateway's published rate, so they are marked as approximate.
 */
const STORAGE_KEY = 'unigate.display-currency';
const listeners = new Set<() => void>();

function stored(): string {
  try {
    return window.localStorage.getItem(STORAGE_KEY) ?? 'USD';
  } catch {
    return 'USD';
  }
}

function choose(currency: string): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, currency);
  } catch {
    // Private modes may refuse storage: the choice then lasts for this page only.
  }
  current = currency;
  for (const listener of listeners) listener();
}

let current: string | null = null;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function snapshot(): string {
  current ??= stored();
  return current;
}

export interface DisplayCurrency {
  currency: string;
  /** Rate from USD (1 for USD). */
  rate: number;
  approximate: boolean;
  options: string[];
  choose: (currency: string) => void;
  /** An amount: cents (or yen), more digits for prices below a cent. */
  format: (usd: number | null | undefined, options?: { precise?: boolean; signed?: boolean }) => string;
}

export function useDisplayCurrency(): DisplayCurrency {
  const fx = useFx();
  const wanted = useSyncExternalStore(subscribe, snapshot, () => 'USD');
  const rates = fx.data?.rates ?? null;
  const options = ['USD', ...Object.keys(rates ?? {}).sort()];
  const currency = wanted !== 'USD' && rates?.[wanted] !== undefined ? wanted : 'USD';
  const rate = currency === 'USD' ? 1 : (rates?.[currency] as number);
  const whole = currency === 'JPY';
  const format: DisplayCurrency['format'] = (usd, formatOptions = {}) => {
    if (usd == null) return '—';
    const value = usd * rate;
    const small = value !== 0 && Math.abs(value) < (whole ? 1 : 0.01);
    const digits = formatOptions.precise === true || small ? (whole ? 4 : 6) : whole ? 0 : 2;
    const text = new Intl.NumberFormat('en-US', {
      style: 'currency', currency, minimumFractionDigits: whole ? 0 : 2, maximumFractionDigits: digits,
      ...(formatOptions.signed === true ? { signDisplay: 'exceptZero' as const } : {}),
    }).format(value);
    return currency === 'USD' ? text : `≈ ${text}`;
  };
  return { currency, rate, approximate: currency !== 'USD', options, choose, format };
}

/** The currency picker shown beside amounts. */
export function CurrencySelect({ display }: { display: DisplayCurrency }) {
  return (
    <SelectField
      label="Currency"
      value={display.currency}
      onChange={(event) => display.choose(event.target.value)}
      options={display.options.map((option) => ({ value: option, label: option === 'USD' ? 'USD (billed)' : `${option} (approximate)` }))}
      hint={display.approximate ? 'Converted at the gateway’s published rate; you are billed in USD.' : undefined}
    />
  );
}
