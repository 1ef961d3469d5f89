import { useEffect, useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { useApi, useResetSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { SignedIn } from '../../api/types';
import type { InvitationLookup } from '../../api/money-types';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Loading } from '../../ui/feedback';
import { TextField } from '../../ui/field';

type Invitation = InvitationLookup;

/** The page an invitation mail links to: a new person chooses a password; a person with a login accepts signed in. */
export function InvitationPage() {
  useDocumentTitle('Invitation');
  const api = useApi();
  const resetSession = useResetSession();
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const token = searchParams.get('token') ?? '';
  const [password, setPassword] = useState('');
  const lookup = useMutation({ mutationFn: () => api.post<Invitation>('/api/invitations/lookup', { token }) });
  const accept = useMutation({
    mutationFn: () => api.post<SignedIn>('/api/invitations/accept', password === '' ? { token } : { token, password }),
    onSuccess: async (result) => {
      await resetSession({ user: result.user, account: result.account, role: result.role, operator: null, csrf_token: result.csrf_token });
      navigate('/keys', { replace: true });
    },
  });
  const { mutate: look } = lookup;
  useEffect(() => { if (token !== '') look(); }, [token, look]);

  if (token === '') return <Alert tone="error">This link has no invitation in it. Open the link from the mail again.</Alert>;
  if (lookup.isPending || lookup.isIdle) return <Loading />;
  if (lookup.isError) return <div className="stack"><h1>Invitation</h1><Alert tone="error">{errorMessage(lookup.error)}</Alert></div>;
  const invitation = lookup.data;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    accept.mutate();
  };
  const next = `/invitation?token=${encodeURIComponent(token)}`;
  return (
    <form className="stack" onSubmit={submit} noValidate>
      <h1>Join an account</h1>
      <p><strong>{invitation.invited_by}</strong> invited <strong>{invitation.email}</strong> as <strong>{invitation.role}</strong>.</p>
      {accept.isError ? <Alert tone="error">{errorMessage(accept.error)}</Alert> : null}
      {invitation.needs === 'choose_password' ? (
        <>
          <TextField label="Choose a password" name="password" type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="new-password" required minLength={10} hint="At least 10 characters; not a common password." />
          <Button type="submit" variant="primary" busy={accept.isPending}>Accept and sign in</Button>
        </>
      ) : invitation.signed_in_as_invitee ? (
        <Button type="submit" variant="primary" busy={accept.isPending}>Accept the invitation</Button>
      ) : (
        <Alert tone="info">{invitation.email} already has a login. <Link to={`/sign-in?next=${encodeURIComponent(next)}`}>Sign in as {invitation.email}</Link>, and this page comes back to accept.</Alert>
      )}
    </form>
  );
}
