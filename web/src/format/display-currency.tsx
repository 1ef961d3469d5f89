import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../api/api-context';
import { errorMessage } from '../api/client';
import { useFx } from '../pages/billing/billing-queries';
import type { DisplayCurrencyJson } from '../../../src/contract/index.js';
import { SelectField } from '../ui/field';

/**
 * The currency the account's console shows prices and amounts in (one choice for the whole account, made by the
 * roles that manage billing). Money stays USD on the server; other currencies are USD times the gateway's published
 * rate, so they are marked as approximate.
 */
type DisplayCurrencySetting = DisplayCurrencyJson;

const settingKey = ['display-currency'] as const;

export interface DisplayCurrency {
  currency: string;
  /** Rate from USD (1 for USD). */
  rate: number;
  approximate: boolean;
  options: string[];
  canChange: boolean;
  choose: (currency: string) => void;
  saving: boolean;
  error: string | null;
  /** An amount: cents (or yen), more digits for prices below a cent. */
  format: (usd: number | null | undefined, options?: { precise?: boolean; signed?: boolean }) => string;
}

export function useDisplayCurrency(): DisplayCurrency {
  const api = useApi();
  const queryClient = useQueryClient();
  const fx = useFx();
  const setting = useQuery({ queryKey: settingKey, queryFn: () => api.get<DisplayCurrencySetting>('/api/console/display-currency'), staleTime: 5 * 60_000 });
  const save = useMutation({
    mutationFn: (currency: string) => api.put<DisplayCurrencySetting>('/api/console/display-currency', { currency }),
    onSuccess: (saved) => queryClient.setQueryData(settingKey, saved),
  });
  const rates = fx.data?.rates ?? null;
  const wanted = setting.data?.currency ?? 'USD';
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
  return {
    currency, rate, approximate: currency !== 'USD', options: setting.data?.choices ?? ['USD'], canChange: setting.data?.can_change === true,
    choose: (next) => save.mutate(next), saving: save.isPending, error: save.isError ? errorMessage(save.error) : null, format,
  };
}

/** The account's currency, changeable by the roles that manage billing. */
export function CurrencySelect({ display }: { display: DisplayCurrency }) {
  const hint = display.error ?? (!display.canChange
    ? 'Chosen for the account by its owners and billing managers.'
    : display.approximate ? 'For everyone on this account, at the gateway’s published rate; you are billed in USD.' : 'For everyone on this account.');
  return (
    <SelectField
      label="Currency"
      value={display.currency}
      disabled={!display.canChange || display.saving}
      onChange={(event) => display.choose(event.target.value)}
      options={display.options.map((option) => ({ value: option, label: option === 'USD' ? 'USD (billed)' : `${option} (approximate)` }))}
      hint={hint}
    />
  );
}
