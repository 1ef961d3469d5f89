import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { MemberRole, Members } from '../../api/money-types';
import { formatDate } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { SelectField, TextField } from '../../ui/field';

export const ROLE_TEXT: Record<MemberRole, string> = {
  owner: 'Owner — everything, including owners',
  admin: 'Admin — everything except owners',
  developer: 'Developer — API keys, usage, playground',
  billing: 'Billing — top-ups, invoices, billing details',
  viewer: 'Viewer — reads keys, usage and billing',
};
const ROLES = Object.keys(ROLE_TEXT) as MemberRole[];
const membersKey = ['members'] as const;

function InviteForm({ mayInviteOwner }: { mayInviteOwner: boolean }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<MemberRole>('developer');
  const invite = useMutation({
    mutationFn: () => api.post('/api/members/invitations', { email: email.trim(), role }),
    onSuccess: async () => {
      setEmail('');
      await queryClient.invalidateQueries({ queryKey: membersKey });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  return (
    <Card title="Invite a member">
      <form className="inline-form" onSubmit={submit} noValidate>
        <TextField label="Email" name="invite-email" type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="off" required />
        <SelectField label="Role" name="invite-role" value={role} onChange={(event) => setRole(event.target.value as MemberRole)}
          options={ROLES.filter((option) => mayInviteOwner || option !== 'owner').map((option) => ({ value: option, label: option[0]?.toUpperCase() + option.slice(1) }))} />
        <Button type="submit" variant="primary" busy={invite.isPending} disabled={email.trim() === ''}>Send invitation</Button>
      </form>
      <ul className="role-list">{ROLES.map((option) => <li key={option}>{ROLE_TEXT[option]}</li>)}</ul>
      {invite.isError ? <Alert tone="error">{errorMessage(invite.error)}</Alert> : null}
      {invite.isSuccess ? <Alert tone="success">Invitation sent. The link in the mail works once, for 7 days.</Alert> : null}
    </Card>
  );
}

export function MembersPage() {
  useDocumentTitle('Members');
  const api = useApi();
  const session = useSession();
  const queryClient = useQueryClient();
  const members = useQuery({ queryKey: membersKey, queryFn: () => api.get<Members>('/api/members') });
  const refresh = () => queryClient.invalidateQueries({ queryKey: membersKey });
  const change = useMutation({ mutationFn: ({ userId, role }: { userId: string; role: MemberRole }) => api.patch(`/api/members/${encodeURIComponent(userId)}`, { role }), onSettled: refresh });
  const remove = useMutation({ mutationFn: (userId: string) => api.delete(`/api/members/${encodeURIComponent(userId)}`), onSettled: refresh });
  const withdraw = useMutation({ mutationFn: (id: string) => api.delete(`/api/members/invitations/${encodeURIComponent(id)}`), onSettled: refresh });
  const myRole = session.data?.role;
  const failure = change.error ?? remove.error ?? withdraw.error;
  return (
    <div className="page stack">
      <PageHeader title="Members" description="People who can sign in to this account, and what each may do." />
      {failure == null ? null : <Alert tone="error">{errorMessage(failure)}</Alert>}
      {members.data?.can_manage === true ? <InviteForm mayInviteOwner={myRole === 'owner'} /> : null}
      <Card title="Members">
        {members.isPending ? <Loading /> : members.isError ? <Alert tone="error">{errorMessage(members.error)}</Alert> : (
          <div className="table-scroll">
            <table className="table table-cards" data-testid="members-table">
              <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Since</th>{members.data.can_manage ? <th scope="col"><span className="visually-hidden">Actions</span></th> : null}</tr></thead>
              <tbody>
                {members.data.data.map((member) => {
                  const owners = members.data.data.filter((other) => other.role === 'owner').length;
                  // Admins leave owners alone, and the last owner stays (the API refuses both as well).
                  const locked = (myRole !== 'owner' && member.role === 'owner') || (member.role === 'owner' && owners === 1);
                  return (
                    <tr key={member.user_id}>
                      <th scope="row">{member.email} {member.you ? <Badge tone="info">you</Badge> : null}</th>
                      <td data-label="Role">
                        {members.data.can_manage && !locked ? (
                          <select aria-label={`Role of ${member.email}`} value={member.role} onChange={(event) => change.mutate({ userId: member.user_id, role: event.target.value as MemberRole })}>
                            {ROLES.filter((option) => myRole === 'owner' || option !== 'owner').map((option) => <option key={option} value={option}>{option}</option>)}
                          </select>
                        ) : <Badge tone="neutral">{member.role}</Badge>}
                      </td>
                      <td data-label="Since">{formatDate(member.created_at)}</td>
                      {members.data.can_manage ? (
                        <td className="cell-actions">
                          {locked ? null : <Button variant="danger" onClick={() => remove.mutate(member.user_id)} busy={remove.isPending && remove.variables === member.user_id}>Remove<span className="visually-hidden"> {member.email}</span></Button>}
                        </td>
                      ) : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <p className="field-hint">Removing a member signs them out of this account at once. Keys they made stay, and show who made them.</p>
      </Card>
      {members.data?.can_manage === true && members.data.invitations.length > 0 ? (
        <Card title="Open invitations">
          <div className="table-scroll">
            <table className="table table-cards">
              <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {members.data.invitations.map((invitation) => (
                  <tr key={invitation.id}>
                    <th scope="row">{invitation.email}</th>
                    <td data-label="Role"><Badge tone="neutral">{invitation.role}</Badge></td>
                    <td data-label="Expires">{formatDate(invitation.expires_at)}</td>
                    <td className="cell-actions"><Button variant="ghost" onClick={() => withdraw.mutate(invitation.id)}>Withdraw<span className="visually-hidden"> the invitation of {invitation.email}</span></Button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      ) : null}
    </div>
  );
}
