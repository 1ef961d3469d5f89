import { z } from 'zod';
import { isoTime } from './common.js';

export const consoleUser = z.strictObject({
  id: z.string(),
  email: z.string(),
  email_verified: z.boolean(),
  two_factor_enabled: z.boolean(),
  created_at: isoTime,
});
export type ConsoleUserJson = z.infer<typeof consoleUser>;

/** The sign-up credit as its owner sees it (null: none given and none to come). */
export const signUpCredit = z.union([
  z.strictObject({ state: z.enum(['granted', 'expired']), amount_usd: z.number(), granted_at: isoTime, expires_at: isoTime.nullable(), taken_back_usd: z.number() }),
  z.strictObject({ state: z.literal('not_given'), reason: z.string() }),
  z.strictObject({ state: z.literal('offered'), amount_usd: z.number(), days: z.number().nullable() }),
]);
export type SignUpCreditJson = z.infer<typeof signUpCredit>;

export const consoleAccount = z.strictObject({
  id: z.string(),
  email: z.string(),
  balance_usd: z.number(),
  tier: z.string(),
  status: z.enum(['enabled', 'disabled', 'deleted']),
  sign_up_credit: signUpCredit.nullable(),
});
export type ConsoleAccountJson = z.infer<typeof consoleAccount>;

export const operatorRole = z.enum(['owner', 'admin', 'support', 'viewer']);
export const operatorPermission = z.enum(['read', 'write', 'support:reply', 'operators:manage']);

/** The signed-in user's standing as an operator of the whole gateway (null in the session for everyone else). */
export const operatorStanding = z.strictObject({
  role: operatorRole,
  /** An owner disabled this operator: no operator route answers them. */
  disabled: z.boolean(),
  two_factor_required: z.boolean(),
  permissions: z.array(operatorPermission),
});
export type OperatorStandingJson = z.infer<typeof operatorStanding>;

export const memberRole = z.enum(['owner', 'admin', 'developer', 'billing', 'viewer']);

/** GET /api/session. */
export const consoleSession = z.strictObject({
  user: consoleUser.nullable(),
  account: consoleAccount.nullable(),
  role: memberRole.nullable(),
  operator: operatorStanding.nullable(),
  csrf_token: z.string(),
});
export type ConsoleSessionJson = z.infer<typeof consoleSession>;

/**
 * A new console session: POST /api/auth/sign-up, /api/auth/sign-in (without a second factor),
 * /api/auth/sign-in/two-factor and /api/invitations/accept.
 */
export const signedIn = z.strictObject({ status: z.literal('signed_in'), user: consoleUser, account: consoleAccount.nullable(), role: memberRole, csrf_token: z.string() });
export type SignedInJson = z.infer<typeof signedIn>;
/** POST /api/auth/sign-in for a user with a second factor: the challenge the code is sent with. */
export const twoFactorChallenge = z.strictObject({ status: z.literal('two_factor_required'), challenge: z.string() });
export const signInResult = z.discriminatedUnion('status', [signedIn, twoFactorChallenge]);
export type SignInResultJson = z.infer<typeof signInResult>;

/** GET /api/config. */
export const consoleConfig = z.strictObject({
  api_base_url: z.string(),
  console_url: z.string(),
  product_name: z.string(),
  mail_configured: z.boolean(),
  features: z.strictObject({ sign_up: z.boolean() }),
});
export type ConsoleConfigJson = z.infer<typeof consoleConfig>;

/** One signed-in browser of the user (GET /api/me/sessions). */
export const sessionRow = z.strictObject({
  id: z.string(),
  device: z.string(),
  user_agent: z.string(),
  ip: z.string(),
  created_at: isoTime,
  last_seen_at: isoTime,
  current: z.boolean(),
});
export type SessionRowJson = z.infer<typeof sessionRow>;
export const sessionList = z.strictObject({ data: z.array(sessionRow) });
export type SessionListJson = z.infer<typeof sessionList>;

/** POST /api/me/two-factor/setup: the new authenticator secret, shown once, as text, as a link and as a QR code. */
export const twoFactorSetup = z.strictObject({ secret: z.string(), otpauth_url: z.string(), qr_svg: z.string() });
export type TwoFactorSetupJson = z.infer<typeof twoFactorSetup>;

/** GET and PUT /api/console/display-currency: the account's display currency, the ones offered, and whether this member may change it. */
export const displayCurrency = z.strictObject({ currency: z.string(), choices: z.array(z.string()), can_change: z.boolean() });
export type DisplayCurrencyJson = z.infer<typeof displayCurrency>;
