import { z } from 'zod';
import { consoleAccount, memberRole } from './account.js';
import { isoTime } from './common.js';

/** A person of the account and their role; `you` marks the signed-in user. */
export const accountMember = z.strictObject({ user_id: z.string(), email: z.string(), role: memberRole, created_at: isoTime, you: z.boolean() });
export type AccountMemberJson = z.infer<typeof accountMember>;

/** An open invitation (its token is only in the mailed link). */
export const invitation = z.strictObject({ id: z.string(), email: z.string(), role: memberRole, invited_by: z.string(), expires_at: isoTime, created_at: isoTime });
export type InvitationJson = z.infer<typeof invitation>;

/** GET /api/members: invitations are listed to owners and admins only (`can_manage`). */
export const memberList = z.strictObject({ data: z.array(accountMember), invitations: z.array(invitation), can_manage: z.boolean() });
export type MemberListJson = z.infer<typeof memberList>;

/** POST /api/members/invitations. */
export const invitationAnswer = z.strictObject({ invitation });
export type InvitationAnswerJson = z.infer<typeof invitationAnswer>;

/** PATCH /api/members/:user_id. */
export const memberRoleAnswer = z.strictObject({ user_id: z.string(), role: memberRole });
export type MemberRoleAnswerJson = z.infer<typeof memberRoleAnswer>;

/** POST /api/invitations/lookup: what the invitation page shows before accepting. */
export const invitationLookup = z.strictObject({
  email: z.string(),
  role: memberRole,
  invited_by: z.string(),
  expires_at: isoTime,
  /** `sign_in`: the person has a console login and accepts while signed in as that email; `choose_password`: a new login. */
  needs: z.enum(['sign_in', 'choose_password']),
  signed_in_as_invitee: z.boolean(),
});
export type InvitationLookupJson = z.infer<typeof invitationLookup>;

/** GET /api/session/accounts: the accounts the signed-in person belongs to. */
export const sessionAccountList = z.strictObject({ data: z.array(consoleAccount.extend({ role: memberRole, current: z.boolean() })) });
export type SessionAccountListJson = z.infer<typeof sessionAccountList>;
