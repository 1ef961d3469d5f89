import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { useApi, useResetSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { SignInResult } from '../../api/types';
import type { SsoAvailabilityJson, SsoStartJson } from '../../../../src/contract/index.js';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert } from '../../ui/feedback';
import { TextField } from '../../ui/field';
import { safeNextPath } from './safe-next-path';


function TwoFactorStep({ challenge, onDone }: { challenge: string; onDone: (result: SignInResult) => Promise<void> }) {
  const api = useApi();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onDone(await api.post<SignInResult>('/api/auth/sign-in/two-factor', { challenge, code: code.trim() }));
    } catch (thrown) {
      setError(errorMessage(thrown));
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(event) => void submit(event)} className="stack" noValidate>
      <h1>Two-factor authentication</h1>
      <p>Enter the 6-digit code from your authenticator app, or one of your backup codes.</p>
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      <TextField label="Code" name="code" value={code} onChange={(event) => setCode(event.target.value)} autoComplete="one-time-code" autoFocus required spellCheck={false} />
      <Button type="submit" variant="primary" busy={busy}>Verify</Button>
    </form>
  );
}

/**
 * Single sign-on: by email (the account whose domain it is sends the browser to its provider), and for operators
 * when the deployment has a provider of its own. The provider sends the browser back to the console.
 */
function SingleSignOn({ email, next }: { email: string; next: string }) {
  const api = useApi();
  const [searchParams] = useSearchParams();
  const available = useQuery({ queryKey: ['sso-available'], queryFn: () => api.get<SsoAvailabilityJson>('/api/auth/sso') });
  const [busy, setBusy] = useState<'email' | 'operator' | null>(null);
  const [error, setError] = useState<string | null>(searchParams.get('sso_error'));
  const start = async (body: Record<string, unknown>, which: 'email' | 'operator') => {
    setBusy(which);
    setError(null);
    try {
      const answer = await api.post<SsoStartJson>('/api/auth/sso/start', { ...body, next });
      window.location.assign(answer.authorization_url);
    } catch (thrown) {
      setError(errorMessage(thrown));
      setBusy(null);
    }
  };
  return (
    <section className="stack" aria-label="Single sign-on">
      <p className="auth-divider"><span>or</span></p>
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      <Button busy={busy === 'email'} onClick={() => {
        if (!email.includes('@')) setError('Enter your work email above, then choose single sign-on.');
        else void start({ email: email.trim() }, 'email');
      }}>Continue with single sign-on</Button>
      {available.data?.operator === true ? <Button variant="ghost" busy={busy === 'operator'} onClick={() => void start({ operator: true }, 'operator')}>Operator sign-in with SSO</Button> : null}
    </section>
  );
}

export function SignInPage() {
  useDocumentTitle('Sign in');
  const api = useApi();
  const resetSession = useResetSession();
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [challenge, setChallenge] = useState<string | null>(null);

  const finish = async (result: SignInResult) => {
    if (result.status === 'two_factor_required') {
      setChallenge(result.challenge);
      setBusy(false);
      return;
    }
    await resetSession({ user: result.user, account: result.account, role: null, operator: null, csrf_token: result.csrf_token });
    navigate(safeNextPath(searchParams.get('next')), { replace: true });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await finish(await api.post<SignInResult>('/api/auth/sign-in', { email: email.trim(), password }));
    } catch (thrown) {
      setError(errorMessage(thrown));
      setBusy(false);
    }
  };

  if (challenge !== null) return <TwoFactorStep challenge={challenge} onDone={finish} />;
  return (
    <form onSubmit={(event) => void submit(event)} className="stack" noValidate>
      <h1>Sign in</h1>
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      <TextField label="Email" name="email" type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="username" required autoFocus />
      <TextField label="Password" name="password" type="password" value={password} onChange={(event) => setPassword(event.target.value)} autoComplete="current-password" required />
      <Button type="submit" variant="primary" busy={busy}>Sign in</Button>
      <SingleSignOn email={email} next={safeNextPath(searchParams.get('next'))} />
      <p className="auth-links">
        <Link to="/reset-password">Forgot your password?</Link>
        <Link to="/sign-up">Create an account</Link>
      </p>
    </form>
  );
}
