import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { useApi, useResetSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert } from '../../ui/feedback';
import { TextField } from '../../ui/field';

function RequestReset() {
  const api = useApi();
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/auth/password-reset', { email: email.trim() });
      setSent(true);
    } catch (thrown) {
      setError(errorMessage(thrown));
    } finally {
      setBusy(false);
    }
  };
  if (sent) {
    return (
      <div className="stack">
        <h1>Check your mail</h1>
        <Alert tone="success">If an account uses that address, a link to choose a new password is on its way. It works once, for 30 minutes.</Alert>
        <p><Link to="/sign-in">Back to sign in</Link></p>
      </div>
    );
  }
  return (
    <form onSubmit={(event) => void submit(event)} className="stack" noValidate>
      <h1>Reset your password</h1>
      <p>We will mail you a link to choose a new password.</p>
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      <TextField label="Email" name="email" type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="email" required autoFocus />
      <Button type="submit" variant="primary" busy={busy}>Send the link</Button>
      <p className="auth-links"><Link to="/sign-in">Back to sign in</Link></p>
    </form>
  );
}

function ConfirmReset({ token }: { token: string }) {
  const api = useApi();
  const resetSession = useResetSession();
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password !== confirmation) {
      setError('The two passwords differ.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/auth/password-reset/confirm', { token, password });
      // The reset ends every session, this browser's included.
      await resetSession();
      setDone(true);
    } catch (thrown) {
      setError(errorMessage(thrown));
    } finally {
      setBusy(false);
    }
  };
  if (done) {
    return (
      <div className="stack">
        <h1>Password changed</h1>
        <Alert tone="success">Your new password is set and every session was signed out. Your API keys keep working.</Alert>
        <p><Link to="/sign-in">Sign in</Link></p>
      </div>
    );
  }
  return (
    <form onSubmit={(event) => void submit(event)} className="stack" noValidate>
      <h1>Choose a new password</h1>
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      <TextField label="New password" name="password" type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="new-password" required minLength={10} maxLength={200} hint="At least 10 characters; not a common password." autoFocus />
      <TextField label="Repeat the new password" name="password-confirmation" type="password" value={confirmation} onChange={(event) => setConfirmation(event.target.value)} autoComplete="new-password" required />
      <Button type="submit" variant="primary" busy={busy}>Set the password</Button>
    </form>
  );
}

/** `/reset-password` asks for the address; `/reset-password?token=…` (the mailed link) sets the new password. */
export function ResetPasswordPage() {
  useDocumentTitle('Reset password');
  const [searchParams] = useSearchParams();
  const token = searchParams.get('token');
  return token === null || token === '' ? <RequestReset /> : <ConfirmReset token={token} />;
}
