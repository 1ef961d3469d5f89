import type { BooleanColumn, IntegerColumn, NullableIntegerColumn } from './schema-columns.js';
import type { Database } from './database-schema.js';

/** Tables of single sign-on and SCIM provisioning (migration 0034), in the conventions of database-schema.ts. */
export interface SsoConnectionsTable {
  id: string;
  /** `operator`, or the account id. */
  owner: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string;
  require_sso: BooleanColumn;
  /** The role a person gets on first sign-in when no claim maps to one; null: no one joins on first sign-in. */
  jit_role: string | null;
  role_claim: string | null;
  /** JSON object: claim value (or SCIM group name) → role. */
  role_map: string;
  /** JSON array: the operators' connection signs in only verified emails of these domains (empty: any). */
  operator_domains: string;
  enabled: BooleanColumn;
  scim_token_hash: string | null;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface SsoDomainsTable {
  domain: string;
  connection_id: string;
  created_at: IntegerColumn;
}

export interface SsoIdentitiesTable {
  connection_id: string;
  subject: string;
  user_id: string;
  created_at: IntegerColumn;
  last_sign_in_at: IntegerColumn;
}

export interface SsoLoginsTable {
  state_hash: string;
  connection_id: string;
  browser_hash: string;
  nonce: string;
  verifier_sealed: string;
  return_to: string;
  created_at: IntegerColumn;
  expires_at: IntegerColumn;
  used_at: NullableIntegerColumn;
}

export interface ScimUsersTable {
  id: string;
  account_id: string;
  user_id: string;
  user_name: string;
  external_id: string | null;
  display_name: string | null;
  active: BooleanColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface ScimGroupsTable {
  id: string;
  account_id: string;
  display_name: string;
  external_id: string | null;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface ScimGroupMembersTable {
  group_id: string;
  scim_user_id: string;
}

export type SsoTables = {
  sso_connections: SsoConnectionsTable;
  sso_domains: SsoDomainsTable;
  sso_identities: SsoIdentitiesTable;
  sso_logins: SsoLoginsTable;
  scim_users: ScimUsersTable;
  scim_groups: ScimGroupsTable;
  scim_group_members: ScimGroupMembersTable;
};

export type SsoDatabase = Database & SsoTables;
