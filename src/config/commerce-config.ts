import { SettingError } from './settings.js';
import { usdToNano } from '../billing/money.js';
import type { NanoUsd } from '../domain/records.js';

/** Card top-ups through Stripe Checkout; null when STRIPE_SECRET_KEY or STRIPE_WEBHOOK_SECRET is missing. */
export interface StripeConfig {
  secretKey: string;
  webhookSecret: string;
  /** Where the stripe package sends its API calls (STRIPE_API_BASE); null: Stripe's own API. */
  apiBase: URL | null;
}

/** Amounts a top-up may have, in whole cents of USD. */
export interface TopUpConfig {
  minimumCents: number;
  maximumCents: number;
  presetCents: number[];
}

export interface SellerConfig {
  name: string;
  /** Postal address, lines separated by newlines (SELLER_ADDRESS takes `\n` or `|` as the line break). */
  address: string;
  taxId: string | null;
  email: string | null;
}

export interface TaxConfig {
  /** Hundredths of a percent: 2000 is 20 %. */
  rateBasisPoints: number;
  label: string;
}

export type ReferralReward =
  | { kind: 'none' }
  | { kind: 'fixed'; amountNano: NanoUsd }
  /** Hundredths of a percent of each of the referred account's first `topUps` paid top-ups. */
  | { kind: 'percent'; basisPoints: number; topUps: number };

export interface CommerceConfig {
  stripe: StripeConfig | null;
  topUp: TopUpConfig;
  seller: SellerConfig;
  tax: TaxConfig | null;
  /** Invoice number prefix of this instance's series (INVOICE_SERIES); credit notes use `<series>-CN`. */
  invoiceSeries: string;
  referralReward: ReferralReward;
  /** Where support tickets are mailed (SUPPORT_EMAIL); null: tickets are only stored and logged. */
  supportEmail: string | null;
  signUpCredit: SignUpCreditConfig;
}

/**
 * The credit a console sign-up gets once its email is verified (SIGNUP_CREDIT_USD, default 0: off), how many days it
 * lasts before its unused part is taken back (SIGNUP_CREDIT_DAYS, default: for good), and how long an address that
 * earned one keeps a second sign-up from it from earning another (SIGNUP_CREDIT_ADDRESS_DAYS, default 30). A tier
 * may set its own amount and days.
 */
export interface SignUpCreditConfig {
  amountNano: NanoUsd;
  days: number | null;
  addressWindowDays: number;
}

export class CommerceConfigError extends SettingError {
  override name = 'ConfigError';
}

type Read = (name: string) => string | undefined;

/** "12.5" USD → 1250 cents, refusing fractions of a cent. */
function usdToCents(name: string, raw: string): number {
  let nano: NanoUsd;
  try {
    nano = usdToNano(raw);
  } catch {
    throw new CommerceConfigError(`${name} must be an amount in USD, got "${raw}"`);
  }
  if (nano % 10_000_000n !== 0n || nano <= 0n || nano > 1_000_000n * 1_000_000_000n) {
    throw new CommerceConfigError(`${name} must be a positive USD amount in whole cents up to 1000000, got "${raw}"`);
  }
  return Number(nano / 10_000_000n);
}

/** "20" or "8.25" percent → basis points (hundredths of a percent). */
function percentToBasisPoints(name: string, raw: string): number {
  const match = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(raw);
  const basisPoints = match === null ? NaN : Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0') || '0');
  if (!Number.isInteger(basisPoints) || basisPoints > 10_000) throw new CommerceConfigError(`${name} must be a percentage from 0 to 100 with at most two decimals, got "${raw}"`);
  return basisPoints;
}

function readStripe(read: Read): StripeConfig | null {
  const secretKey = read('STRIPE_SECRET_KEY');
  const webhookSecret = read('STRIPE_WEBHOOK_SECRET');
  if (secretKey === undefined || webhookSecret === undefined) return null;
  const base = read('STRIPE_API_BASE');
  let apiBase: URL | null = null;
  if (base !== undefined) {
    try {
      apiBase = new URL(base);
    } catch {
      throw new CommerceConfigError(`STRIPE_API_BASE is not a URL: "${base}"`);
    }
    if (apiBase.protocol !== 'http:' && apiBase.protocol !== 'https:') throw new CommerceConfigError('STRIPE_API_BASE must start with http:// or https://');
  }
  return { secretKey, webhookSecret, apiBase };
}

function readTopUp(read: Read): TopUpConfig {
  const minimumCents = usdToCents('TOPUP_MIN_USD', read('TOPUP_MIN_USD') ?? '5');
  const maximumCents = usdToCents('TOPUP_MAX_USD', read('TOPUP_MAX_USD') ?? '1000');
  if (maximumCents < minimumCents) throw new CommerceConfigError('TOPUP_MAX_USD must not be below TOPUP_MIN_USD');
  const presets = (read('TOPUP_PRESETS_USD') ?? '10,25,50,100').split(',').map((entry) => entry.trim()).filter(Boolean);
  const presetCents = presets.map((entry) => usdToCents('TOPUP_PRESETS_USD', entry));
  for (const cents of presetCents) {
    if (cents < minimumCents || cents > maximumCents) throw new CommerceConfigError('every TOPUP_PRESETS_USD amount must lie within TOPUP_MIN_USD and TOPUP_MAX_USD');
  }
  return { minimumCents, maximumCents, presetCents: [...new Set(presetCents)].sort((left, right) => left - right) };
}

function readTax(read: Read): TaxConfig | null {
  const raw = read('TAX_RATE_PERCENT');
  if (raw === undefined) return null;
  const rateBasisPoints = percentToBasisPoints('TAX_RATE_PERCENT', raw);
  if (rateBasisPoints === 0) return null;
  return { rateBasisPoints, label: read('TAX_LABEL') ?? 'Tax' };
}

/** REFERRAL_REWARD: `5` (USD once, on the referred account's first paid top-up) or `10%` (of its first top-ups). */
function readReferralReward(read: Read): ReferralReward {
  const raw = read('REFERRAL_REWARD');
  if (raw === undefined || raw === '0' || raw === '0%') return { kind: 'none' };
  if (raw.endsWith('%')) {
    const basisPoints = percentToBasisPoints('REFERRAL_REWARD', raw.slice(0, -1).trim());
    const topUpsRaw = read('REFERRAL_REWARD_TOPUPS') ?? '1';
    const topUps = Number(topUpsRaw);
    if (!Number.isInteger(topUps) || topUps < 1 || topUps > 1000) throw new CommerceConfigError(`REFERRAL_REWARD_TOPUPS must be an integer from 1 to 1000, got "${topUpsRaw}"`);
    return basisPoints === 0 ? { kind: 'none' } : { kind: 'percent', basisPoints, topUps };
  }
  let amountNano: NanoUsd;
  try {
    amountNano = usdToNano(raw);
  } catch {
    throw new CommerceConfigError(`REFERRAL_REWARD must be a USD amount (e.g. 5) or a percentage (e.g. 10%), got "${raw}"`);
  }
  if (amountNano < 0n) throw new CommerceConfigError('REFERRAL_REWARD must not be negative');
  return { kind: 'fixed', amountNano };
}

function readDays(read: Read, name: string, fallback: number | null): number | null {
  const raw = read(name);
  if (raw === undefined || raw === '') return fallback;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 1 || days > 3650) throw new CommerceConfigError(`${name} must be a whole number of days from 1 to 3650, got "${raw}"`);
  return days;
}

function readSignUpCredit(read: Read): SignUpCreditConfig {
  const raw = read('SIGNUP_CREDIT_USD') ?? '0';
  let amountNano: NanoUsd;
  try {
    amountNano = usdToNano(raw);
  } catch {
    throw new CommerceConfigError(`SIGNUP_CREDIT_USD must be a USD amount (e.g. 1 or 0.50), got "${raw}"`);
  }
  if (amountNano < 0n) throw new CommerceConfigError('SIGNUP_CREDIT_USD must not be negative');
  return { amountNano, days: readDays(read, 'SIGNUP_CREDIT_DAYS', null), addressWindowDays: readDays(read, 'SIGNUP_CREDIT_ADDRESS_DAYS', 30) ?? 30 };
}

function readEmail(read: Read, name: string): string | null {
  const value = read(name);
  if (value === undefined) return null;
  if (value.length > 254 || !/^[^\s<>@]+@[^\s<>@]+$/.test(value)) throw new CommerceConfigError(`${name} must be an email address`);
  return value;
}

/** Payments, invoices, referrals and support: read from the environment once, with the rest of the configuration. */
export function readCommerceConfig(read: Read): CommerceConfig {
  const series = read('INVOICE_SERIES') ?? 'INV';
  if (!/^[A-Z0-9][A-Z0-9-]{0,15}$/.test(series)) throw new CommerceConfigError('INVOICE_SERIES must be 1-16 capital letters, digits or dashes');
  return {
    stripe: readStripe(read),
    topUp: readTopUp(read),
    seller: {
      name: read('SELLER_NAME') ?? 'Gateway operator',
      address: (read('SELLER_ADDRESS') ?? '').replace(/\\n|\|/g, '\n'),
      taxId: read('SELLER_TAX_ID') ?? null,
      email: readEmail(read, 'SELLER_EMAIL'),
    },
    tax: readTax(read),
    invoiceSeries: series,
    referralReward: readReferralReward(read),
    supportEmail: readEmail(read, 'SUPPORT_EMAIL'),
    signUpCredit: readSignUpCredit(read),
  };
}
