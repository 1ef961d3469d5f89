/** The console API's shapes for billing, referrals, support and members (docs/console-api.md), from the contract where the server declares them. */
import type {
  BillingJson, BillingProfileJson, ConsoleSessionJson, FxRatesJson, InvoiceJson, ListPageJson, ReferralsJson, SupportTicketJson, TopUpJson,
} from '../../../src/contract/index.js';

export type TopUp = TopUpJson;

export type Billing = BillingJson;

export type FxRates = FxRatesJson;

export type BillingProfile = BillingProfileJson;

export type Invoice = InvoiceJson;

export type ListPage<T> = ListPageJson<T>;

export type Referrals = ReferralsJson;

export type SupportTicket = SupportTicketJson;

export type MemberRole = NonNullable<ConsoleSessionJson['role']>;

export interface Members {
  data: Array<{ user_id: string; email: string; role: MemberRole; created_at: string; you: boolean }>;
  invitations: Array<{ id: string; email: string; role: MemberRole; invited_by: string; expires_at: string; created_at: string }>;
  can_manage: boolean;
}
