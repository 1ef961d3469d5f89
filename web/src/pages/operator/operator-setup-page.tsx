import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router-dom';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { TextField } from '../../ui/field';
import { Alert } from '../../ui/feedback';

/** The first operator: the admin token once, an email and a password; two-factor sign-in comes next. */
export function OperatorSetupPage() {
  useDocumentTitle('Set up the operator console');
  const api = useApi();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [form, setForm] = useState({ admin_token: '', email: '', password: '' });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/operator/bootstrap', form);
      await queryClient.invalidateQueries();
      navigate('/security', { replace: true });
    } catch (thrown) {
      setError(errorMessage(thrown));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="stack" onSubmit={(event) => void submit(event)}>
      <h1>Set up the operator console</h1>
      <p className="field-hint">Once only: the admin token makes the first owner. Two-factor sign-in is then required before any operator page opens.</p>
      <TextField label="Admin token" type="password" autoComplete="off" value={form.admin_token} onChange={(event) => setForm({ ...form, admin_token: event.target.value })} required />
      <TextField label="Email" type="email" autoComplete="username" value={form.email} onChange={(event) => setForm({ ...form, email: event.target.value })} required />
      <TextField label="Password" type="password" autoComplete="new-password" value={form.password} onChange={(event) => setForm({ ...form, password: event.target.value })} required hint="At least 10 characters, or the current password of an existing console user." />
      {error === null ? null : <Alert tone="error">{error}</Alert>}
      <Button variant="primary" type="submit" busy={busy}>Create the owner</Button>
    </form>
  );
}
