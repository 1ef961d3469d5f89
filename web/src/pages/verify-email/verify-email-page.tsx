import { useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { sessionQueryKey, useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Alert, Loading } from '../../ui/feedback';

/** The page the verification mail links to: it spends the token once and says what happened. */
export function VerifyEmailPage() {
  useDocumentTitle('Verify email');
  const api = useApi();
  const queryClient = useQueryClient();
  const [searchParams] = useSearchParams();
  const token = searchParams.get('token');
  const [state, setState] = useState<{ kind: 'working' } | { kind: 'done' } | { kind: 'failed'; message: string }>({ kind: 'working' });
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    if (token === null || token === '') {
      setState({ kind: 'failed', message: 'This link has no token. Open the link from the mail exactly as it was sent.' });
      return;
    }
    api.post('/api/auth/verify-email', { token })
      .then(async () => {
        setState({ kind: 'done' });
        await queryClient.invalidateQueries({ queryKey: sessionQueryKey });
      })
      .catch((error: unknown) => setState({ kind: 'failed', message: errorMessage(error) }));
  }, [api, queryClient, token]);

  return (
    <div className="stack">
      <h1>Verify email</h1>
      {state.kind === 'working' ? <Loading label="Checking the link…" /> : null}
      {state.kind === 'done' ? <Alert tone="success">Your email address is verified.</Alert> : null}
      {state.kind === 'failed' ? <Alert tone="error">{state.message}</Alert> : null}
      {state.kind === 'working' ? null : <p><Link to="/keys">Go to the console</Link></p>}
    </div>
  );
}
