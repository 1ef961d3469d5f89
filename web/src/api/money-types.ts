/** The console API's shapes for billing, referrals, support and members (docs/console-api.md), from the contract where the server declares them. */
import type {
  BillingJson, BillingProfileJson, ConsoleSessionJson, FxRatesJson, InvoiceJson, InvitationLookupJson, ListPageJson, MemberListJson, ReferralsJson,
  SessionAccountListJson, SupportTicketJson, TopUpJson,
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

export type Members = MemberListJson;

/** What the invitation page shows before accepting. */
export type InvitationLookup = InvitationLookupJson;

/** The accounts the signed-in person belongs to (the account switcher). */
export type SessionAccounts = SessionAccountListJson;
