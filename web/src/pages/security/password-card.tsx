import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import { Button } from '../../ui/button';
import { Alert, Card } from '../../ui/feedback';
import { TextField } from '../../ui/field';
import { useChangePassword } from './security-queries';

export function PasswordCard() {
  const change = useChangePassword();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate({ current_password: current, new_password: next }, { onSuccess: () => { setCurrent(''); setNext(''); } });
  };
  return (
    <Card title="Password">
      <form className="stack narrow" onSubmit={submit} noValidate>
        {change.isError ? <Alert tone="error">{errorMessage(change.error)}</Alert> : null}
        {change.isSuccess ? <Alert tone="success">Password changed. Other sessions were signed out; API keys are untouched.</Alert> : null}
        <TextField label="Current password" type="password" value={current} onChange={(event) => setCurrent(event.target.value)} autoComplete="current-password" required />
        <TextField label="New password" type="password" value={next} onChange={(event) => setNext(event.target.value)} autoComplete="new-password" required minLength={10} hint="At least 10 characters; not a common password." />
        <div><Button type="submit" variant="primary" busy={change.isPending}>Change password</Button></div>
      </form>
    </Card>
  );
}
