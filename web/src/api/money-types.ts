/** The console API's shapes for billing, referrals, support and members (docs/console-api.md). */

export interface TopUp {
  id: string;
  status: string;
  amount_usd: number;
  tax_usd: number;
  total_usd: number;
  refunded_usd: number;
  invoice_id: string | null;
  created_at: string;
  paid_at: string | null;
}

export interface Billing {
  balance_usd: number;
  can_spend: boolean;
  card:
    | { enabled: false; how_to_enable: string }
    | { enabled: true; currency: string; presets_usd: number[]; min_usd: number; max_usd: number; tax: { label: string; rate_percent: number } | null };
  recent_top_ups: TopUp[];
}

export interface FxRates {
  base: string;
  rates: Record<string, number> | null;
  as_of: string | null;
}

export interface BillingProfile {
  name: string | null;
  address: string | null;
  country: string | null;
  tax_id: string | null;
  email: string | null;
  updated_at: string | null;
}

export interface Invoice {
  id: string;
  object: 'invoice' | 'credit_note';
  number: string;
  total_usd: number;
  tax_usd: number;
  issued_at: string;
  pdf_url: string;
  /** What was bought: account credit, a plan period, or the refund a credit note records. */
  lines: Array<{ description: string; amount_usd: number }>;
}

export interface ListPage<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface Referrals {
  code: string;
  link: string;
  reward: string;
  referred: Array<{ account_id: string; signed_up_at: string; eligible: boolean; reason: string | null; rewarded_usd: number; rewards: number }>;
  rewards: Array<{ ledger_entry_id: string; referred_account_id: string; amount_usd: number; created_at: string }>;
}

export interface SupportTicket {
  id: string;
  subject: string;
  category: string;
  message: string;
  request_id: string | null;
  status: string;
  email: string;
  created_at: string;
  updated_at: string;
  replies?: Array<{ id: string; author: string; body: string; created_at: string }>;
}

export type MemberRole = 'owner' | 'admin' | 'developer' | 'billing' | 'viewer';

export interface Members {
  data: Array<{ user_id: string; email: string; role: MemberRole; created_at: string; you: boolean }>;
  invitations: Array<{ id: string; email: string; role: MemberRole; invited_by: string; expires_at: string; created_at: string }>;
  can_manage: boolean;
}
