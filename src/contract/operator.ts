import { z } from 'zod';
import { signUpCredit, operatorRole } from './account.js';
import { isoTime, listPageOf } from './common.js';
import { overagePolicy, planPeriod, subscription } from './plans.js';

/** GET /api/operator/operators: one operator of the gateway. */
export const operatorRow = z.strictObject({
  user_id: z.string(),
  /** null when the console user behind the grant is gone. */
  email: z.string().nullable(),
  role: operatorRole,
  status: z.enum(['active', 'disabled']),
  two_factor_enabled: z.boolean(),
  created_at: isoTime,
  /** The operator who granted the role; null for the first one, made with the admin token. */
  created_by: z.string().nullable(),
  disabled_at: isoTime.nullable(),
  disabled_by: z.string().nullable(),
});
export type OperatorRowJson = z.infer<typeof operatorRow>;
export const operatorList = z.strictObject({ data: z.array(operatorRow) });
export type OperatorListJson = z.infer<typeof operatorList>;
/** POST /api/operator/operators: the role granted, and whether the email was new (then a mail invites them). */
export const operatorGrant = z.strictObject({ user_id: z.string(), email: z.string(), role: operatorRole, invited: z.boolean() });
export type OperatorGrantJson = z.infer<typeof operatorGrant>;

/** One change an operator made, as GET /api/operator/audit lists it: the states before and after have secrets removed. */
export const auditEntry = z.strictObject({
  id: z.string(),
  at: isoTime,
  operator: z.strictObject({ id: z.string(), email: z.string() }),
  /** `METHOD /admin/path` or a named console action. */
  action: z.string(),
  target: z.string(),
  status: z.number().int(),
  before: z.unknown(),
  after: z.unknown(),
  ip: z.string(),
});
export type AuditEntryJson = z.infer<typeof auditEntry>;
export const auditPage = listPageOf(auditEntry);
export type AuditPageJson = z.infer<typeof auditPage>;

/** GET /api/operator/users?email=…: a console user's sign-in standing, as support sees it. */
export const userStanding = z.strictObject({
  id: z.string(),
  email: z.string(),
  email_verified: z.boolean(),
  two_factor_enabled: z.boolean(),
  locked: z.strictObject({ reason: z.string(), locked_by: z.string().nullable(), locked_at: isoTime }).nullable(),
  memberships: z.array(z.strictObject({ account_id: z.string(), role: z.string() })),
  active_sessions: z.number().int(),
  operator_role: operatorRole.nullable(),
  created_at: isoTime,
});
export type UserStandingJson = z.infer<typeof userStanding>;
export const userStandingList = z.strictObject({ data: z.array(userStanding) });
export type UserStandingListJson = z.infer<typeof userStandingList>;

/** A tier: the default limits and sign-up credit of the accounts on it. */
export const tier = z.strictObject({
  object: z.literal('tier'),
  name: z.string(),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  signup_credit_usd: z.number().nullable(),
  signup_credit_days: z.number().int().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type TierJson = z.infer<typeof tier>;
export const tierPage = listPageOf(tier);

/** An announcement as every API shows it (admin, console and the public list). */
export const announcement = z.strictObject({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  level: z.enum(['info', 'warning', 'critical']),
  published_at: isoTime,
  expires_at: isoTime.nullable(),
});
export type AnnouncementJson = z.infer<typeof announcement>;
export const announcementPage = listPageOf(announcement);
/** GET /api/announcements: the active ones, newest first, each saying whether the signed-in person dismissed it. */
export const consoleAnnouncementList = z.strictObject({ object: z.literal('list'), data: z.array(announcement.extend({ dismissed: z.boolean() })) });
export type ConsoleAnnouncementListJson = z.infer<typeof consoleAnnouncementList>;
export type ConsoleAnnouncementJson = ConsoleAnnouncementListJson['data'][number];

export const redemptionCodeState = z.enum(['active', 'redeemed', 'expired', 'disabled']);

/** A redemption code; `code` (the plaintext) only in the answer that made it. */
export const redemptionCode = z.strictObject({
  id: z.string(),
  object: z.literal('redemption_code'),
  name: z.string(),
  hint: z.string(),
  amount_usd: z.number(),
  state: redemptionCodeState,
  expires_at: isoTime.nullable(),
  disabled_at: isoTime.nullable(),
  redeemed_by: z.string().nullable(),
  redeemed_at: isoTime.nullable(),
  ledger_entry_id: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
  code: z.string().optional(),
});
export type RedemptionCodeJson = z.infer<typeof redemptionCode>;
export const redemptionCodePage = listPageOf(redemptionCode);

/** A plan as the admin API shows it. */
export const adminPlan = z.strictObject({
  id: z.string(),
  object: z.literal('plan'),
  name: z.string(),
  period: planPeriod,
  quota_usd: z.number(),
  overage: z.strictObject({ policy: overagePolicy, limit_usd: z.number().nullable() }),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  self_service: z.boolean(),
  price_usd: z.number(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type AdminPlanJson = z.infer<typeof adminPlan>;
export const adminPlanPage = listPageOf(adminPlan);

const effectiveLimit = z.strictObject({ value: z.number().int().nullable(), source: z.enum(['account', 'tier', 'none']) });

/** An account as the admin API lists it. */
export const adminAccount = z.strictObject({
  id: z.string(),
  object: z.literal('account'),
  email: z.string(),
  status: z.enum(['enabled', 'disabled', 'deleted']),
  deleted_at: isoTime.nullable(),
  tier: z.string(),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  concurrency: z.number().int().nullable(),
  /** The limits that apply: the account's own, else its tier's. */
  effective_limits: z.strictObject({ rpm: effectiveLimit, tpm: effectiveLimit, concurrency: effectiveLimit }),
  balance_usd: z.number(),
  credit_line_usd: z.number(),
  alert_balance_usd: z.number().nullable(),
  has_password: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type AdminAccountJson = z.infer<typeof adminAccount>;
export const adminAccountPage = listPageOf(adminAccount);

/** The names of the guardrail policies bound to a model, account, project or key (`guardrails` in reads and changes). */
export const guardrailNames = z.array(z.string());
export type GuardrailNamesJson = z.infer<typeof guardrailNames>;

/** One account read alone: its subscriptions and sign-up credit as well, and (read or changed) its guardrail policies' names. */
export const adminAccountDetail = adminAccount.extend({ subscriptions: z.array(subscription), sign_up_credit: signUpCredit.nullable(), guardrails: guardrailNames.optional() });
export type AdminAccountDetailJson = z.infer<typeof adminAccountDetail>;

/** One entry of an account's ledger, with what it means in words. */
export const adminLedgerEntry = z.strictObject({
  id: z.string(),
  kind: z.string(),
  type: z.string(),
  description: z.string(),
  amount_usd: z.number(),
  key_id: z.string().nullable(),
  request_id: z.string().nullable(),
  reason: z.string().nullable(),
  created_at: isoTime,
});
export type AdminLedgerEntryJson = z.infer<typeof adminLedgerEntry>;
export const adminLedgerPage = listPageOf(adminLedgerEntry);
export type AdminLedgerPageJson = z.infer<typeof adminLedgerPage>;

/** A guardrail policy as /admin/guardrails shows it (the operator's guardrails page reads it through the bridge). */
export const guardrailPolicy = z.strictObject({
  id: z.string(),
  object: z.literal('guardrail'),
  name: z.string(),
  kind: z.enum(['pii', 'deny_list', 'moderation', 'webhook']),
  mode: z.enum(['block', 'mask', 'log']),
  applies_to: z.enum(['input', 'output', 'both']),
  /** Account owners and admins may attach it to their own keys in the console. */
  accounts_may_use: z.boolean(),
  /** What accounts may do to it where it applies to them: nothing, relax its mode, or also turn it off. */
  accounts_may_override: z.enum(['none', 'relax', 'disable']),
  settings: z.record(z.string(), z.unknown()),
  /** A webhook's header names (the values are sealed and never shown). */
  header_names: z.array(z.string()).optional(),
  /**
   * Where it is bound (list and single reads): every model, account, project and key. `name` is what an operator
   * knows it by (the model's id, the account's email, the project's or key's name; null when it is gone); a project's
   * and a key's account are named too.
   */
  bound_to: z.array(z.strictObject({
    scope: z.enum(['model', 'account', 'project', 'key']),
    id: z.string(),
    name: z.string().nullable().optional(),
    account_id: z.string().optional(),
    account_email: z.string().nullable().optional(),
  })).optional(),
  /** Accounts' overrides of it (list and single reads): where, the mode chosen, and whether the policy allows it now. */
  overrides: z.array(z.strictObject({
    account_id: z.string(),
    /** The overriding account's email (null when it is deleted). */
    account_email: z.string().nullable().optional(),
    scope: z.enum(['account', 'project', 'key']),
    id: z.string(),
    /** The project's or key's name; the account's email for an account-wide override (null when it is gone). */
    name: z.string().nullable().optional(),
    mode: z.enum(['off', 'log', 'mask']),
    applied: z.boolean(),
    updated_at: isoTime,
  })).optional(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type GuardrailPolicyJson = z.infer<typeof guardrailPolicy>;
/** GET /admin/guardrails: every policy, in one page. */
export const guardrailPolicyList = listPageOf(guardrailPolicy);
export type GuardrailPolicyListJson = z.infer<typeof guardrailPolicyList>;
