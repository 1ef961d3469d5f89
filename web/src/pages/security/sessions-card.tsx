import { errorMessage } from '../../api/client';
import { formatDateTime } from '../../format/format';
import { Button } from '../../ui/button';
import { Alert, Badge, Card, Loading } from '../../ui/feedback';
import { useEndSession, useSessions } from './security-queries';

export function SessionsCard({ onSignOutEverywhere }: { onSignOutEverywhere: () => void }) {
  const sessions = useSessions();
  const endSession = useEndSession();
  return (
    <Card title="Active sessions" actions={<Button variant="danger" onClick={onSignOutEverywhere}>Sign out everywhere</Button>}>
      {sessions.isPending ? <Loading /> : null}
      {sessions.isError ? <Alert tone="error">{errorMessage(sessions.error)}</Alert> : null}
      {endSession.isError ? <Alert tone="error">{errorMessage(endSession.error)}</Alert> : null}
      {sessions.data === undefined ? null : (
        <div className="table-scroll">
          <table className="table table-cards" data-testid="sessions-table">
            <caption className="visually-hidden">Browsers signed in to this account</caption>
            <thead>
              <tr><th scope="col">Device</th><th scope="col">IP address</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {sessions.data.data.map((session) => (
                <tr key={session.id}>
                  <th scope="row">{session.device} {session.current ? <Badge tone="info">This browser</Badge> : null}</th>
                  <td data-label="IP address" className="mono wrap-anywhere">{session.ip}</td>
                  <td data-label="Signed in">{formatDateTime(session.created_at)}</td>
                  <td data-label="Last seen">{formatDateTime(session.last_seen_at)}</td>
                  <td className="cell-actions">
                    {session.current ? null : (
                      <Button variant="ghost" onClick={() => endSession.mutate(session.id)} busy={endSession.isPending && endSession.variables === session.id} aria-label={`Sign out ${session.device} at ${session.ip}`}>
                        Sign out
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
