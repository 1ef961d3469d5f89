import { z } from 'zod';
import { isoTime } from './common.js';

/** A single sign-on connection (an account's or the operators'): never its client secret, only that one is set. */
export const ssoConnection = z.strictObject({
  id: z.string(),
  issuer: z.string(),
  client_id: z.string(),
  client_secret_set: z.boolean(),
  /** The mail domains whose people it signs in (an account's own; none for the operators'). */
  email_domains: z.array(z.string()),
  require_sso: z.boolean(),
  /** The role a person it signs in for the first time gets (null: none is made). */
  jit_role: z.string().nullable(),
  /** The ID token claim read for `role_map` (null: none). */
  role_claim: z.string().nullable(),
  role_map: z.record(z.string(), z.string()),
  enabled: z.boolean(),
  scim_enabled: z.boolean(),
  /** Null for the operators' connection set by the environment. */
  updated_at: isoTime.nullable(),
});
export type SsoConnectionJson = z.infer<typeof ssoConnection>;

/** GET /api/sso: the account's connection (null: none), and what its identity provider and SCIM client are given. */
export const accountSso = z.strictObject({ connection: ssoConnection.nullable(), redirect_uri: z.string(), scim_base_url: z.string() });
export type AccountSsoJson = z.infer<typeof accountSso>;

/** PUT /api/sso and /api/operator/sso: the connection as saved. */
export const savedSso = z.strictObject({ connection: ssoConnection });
export type SavedSsoJson = z.infer<typeof savedSso>;

/** GET /api/operator/sso: the operators' connection and where it is set (the environment wins; null: nowhere). */
export const operatorSso = z.strictObject({
  source: z.enum(['environment', 'console']).nullable(),
  connection: ssoConnection.nullable(),
  redirect_uri: z.string(),
});
export type OperatorSsoJson = z.infer<typeof operatorSso>;

/** GET /api/auth/sso: whether the sign-in page offers operators' single sign-on, and the redirect URI providers call. */
export const ssoAvailability = z.strictObject({ operator: z.boolean(), redirect_uri: z.string() });
export type SsoAvailabilityJson = z.infer<typeof ssoAvailability>;
/** POST /api/auth/sso/start: where the browser goes to sign in with the identity provider. */
export const ssoStart = z.strictObject({ authorization_url: z.string() });
export type SsoStartJson = z.infer<typeof ssoStart>;
