import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { useApi, useConsoleConfig, useResetSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { SignedIn } from '../../api/types';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert } from '../../ui/feedback';
import { TextField } from '../../ui/field';

export function SignUpPage() {
  useDocumentTitle('Create an account');
  const api = useApi();
  const config = useConsoleConfig();
  const resetSession = useResetSession();
  const navigate = useNavigate();
  // A referral link (/sign-up?ref=CODE) credits whoever shared it; the code rides along with the sign-up.
  const [searchParams] = useSearchParams();
  const referralCode = (searchParams.get('ref') ?? '').trim().slice(0, 64);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const mismatch = confirmation !== '' && confirmation !== password;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password !== confirmation) {
      setError('The two passwords differ.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const result = await api.post<SignedIn>('/api/auth/sign-up', { email: email.trim(), password, ...(referralCode === '' ? {} : { ref: referralCode }) });
      await resetSession({ user: result.user, account: result.account, role: result.role, operator: null, csrf_token: result.csrf_token });
      navigate('/keys', { replace: true });
    } catch (thrown) {
      setError(errorMessage(thrown));
      setBusy(false);
    }
  };

  if (config.data?.features.sign_up === false) {
    return (
      <div className="stack">
        <h1>Create an account</h1>
        <Alert tone="info">This gateway does not take sign-ups. Ask its operator for an account.</Alert>
        <p><Link to="/sign-in">Sign in</Link></p>
      </div>
    );
  }
  return (
    <form onSubmit={(event) => void submit(event)} className="stack" noValidate>
      <h1>Create an account</h1>
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      {referralCode === '' ? null : <p className="field-hint">Invited with referral code <strong>{referralCode}</strong>.</p>}
      <TextField label="Email" name="email" type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="email" required autoFocus />
      <TextField label="Password" name="password" type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="new-password" required minLength={10} maxLength={200} hint="At least 10 characters; not a common password." />
      <TextField label="Repeat the password" name="password-confirmation" type="password" value={confirmation} onChange={(event) => setConfirmation(event.target.value)} autoComplete="new-password" required error={mismatch ? 'The two passwords differ.' : null} />
      <Button type="submit" variant="primary" busy={busy}>Create account</Button>
      <p className="auth-links"><span>Have an account? <Link to="/sign-in">Sign in</Link></span></p>
    </form>
  );
}
