import type { IntegerColumn, NullableIntegerColumn } from './schema-columns.js';

// The web console's tables: people, their memberships, sessions, single-use tokens, backup codes and invitations.

export interface ConsoleUsersTable {
  id: string;
  email: string;
  /** argon2id (PHC string). */
  password_hash: string;
  email_verified_at: NullableIntegerColumn;
  /** The confirmed TOTP secret, sealed with the secret key; null: two-factor is off. */
  totp_secret_sealed: string | null;
  /** A secret being enrolled (set up, not yet confirmed by a first code). */
  totp_pending_sealed: string | null;
  totp_enabled_at: NullableIntegerColumn;
  /** The last TOTP time step accepted (codes of that step or earlier are refused). */
  totp_last_step: NullableIntegerColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface AccountMembersTable {
  account_id: string;
  user_id: string;
  role: string;
  created_at: IntegerColumn;
}

export interface ConsoleSessionsTable {
  id: string;
  /** SHA-256 of the cookie value, lowercase hex. */
  token_hash: string;
  user_id: string;
  account_id: string;
  csrf_token: string;
  ip: string;
  user_agent: string;
  created_at: IntegerColumn;
  last_seen_at: IntegerColumn;
  expires_at: IntegerColumn;
  /** The single sign-on connection of the sign-in (migration 0034); null: a password. */
  sso_connection_id: string | null;
}

export interface ConsoleTokensTable {
  token_hash: string;
  kind: string;
  user_id: string;
  expires_at: IntegerColumn;
  used_at: NullableIntegerColumn;
  created_at: IntegerColumn;
}

export interface ConsoleInvitationsTable {
  id: string;
  /** SHA-256 of the mailed token, lowercase hex. */
  token_hash: string;
  account_id: string;
  email: string;
  role: string;
  /** The console user who invited. */
  invited_by: string;
  expires_at: IntegerColumn;
  accepted_at: NullableIntegerColumn;
  accepted_by: string | null;
  revoked_at: NullableIntegerColumn;
  created_at: IntegerColumn;
}

export interface ConsoleBackupCodesTable {
  user_id: string;
  code_hash: string;
  used_at: NullableIntegerColumn;
  created_at: IntegerColumn;
}
