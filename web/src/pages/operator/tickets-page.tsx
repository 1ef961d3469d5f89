import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import type { ListPage, SupportTicket } from '../../api/money-types';
import { formatDateTime } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { SelectField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';

function TicketThread({ id, canReply }: { id: string; canReply: boolean }) {
  const ticket = useOperatorGet<SupportTicket>(`admin/support/tickets/${encodeURIComponent(id)}`);
  const action = useOperatorAction();
  const [body, setBody] = useState('');
  const send = (status: 'answered' | 'closed') => (event?: FormEvent) => {
    event?.preventDefault();
    action.mutate({ method: 'POST', path: `admin/support/tickets/${encodeURIComponent(id)}/replies`, body: { body, status } }, { onSuccess: () => setBody('') });
  };
  if (ticket.isPending) return <Loading />;
  if (ticket.isError) return <Alert tone="error">{errorMessage(ticket.error)}</Alert>;
  const data = ticket.data;
  return (
    <Card title={data.subject}>
      <p className="field-hint">{data.email} · {data.category} · {formatDateTime(data.created_at)}{data.request_id === null ? '' : ` · request ${data.request_id}`}</p>
      <ul className="thread" aria-label="Conversation">
        <li><strong>{data.email}</strong>{'\n'}{data.message}</li>
        {(data.replies ?? []).map((reply) => <li key={reply.id}><strong>{reply.author === 'operator' ? 'Support' : data.email}</strong> · {formatDateTime(reply.created_at)}{'\n'}{reply.body}</li>)}
      </ul>
      {canReply ? (
        <form className="stack" onSubmit={send('answered')}>
          <div className="field"><label htmlFor="ticket-reply">Reply (mailed to {data.email})</label><textarea id="ticket-reply" rows={4} value={body} onChange={(event) => setBody(event.target.value)} required maxLength={20_000} /></div>
          {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
          <div className="form-actions">
            <Button type="button" disabled={body.trim() === ''} busy={action.isPending} onClick={() => send('closed')()}>Reply and close</Button>
            <Button variant="primary" type="submit" busy={action.isPending}>Reply</Button>
          </div>
        </form>
      ) : null}
    </Card>
  );
}

/** The support queue of every account; replies reach the user by mail and in their console. */
export function OperatorTicketsPage() {
  useDocumentTitle('Support tickets');
  const me = useOperatorMe();
  const [status, setStatus] = useState('open');
  const [selected, setSelected] = useState<string | null>(null);
  const tickets = useOperatorGet<ListPage<SupportTicket>>('admin/support/tickets', { status: status === 'all' ? undefined : status, limit: '100' }, { refreshMs: 30_000 });
  return (
    <div className="page stack">
      <PageHeader title="Support tickets" description="Replies are mailed to the user and shown in their console." />
      <Card>
        <SelectField label="Status" value={status} onChange={(event) => setStatus(event.target.value)} options={['open', 'answered', 'closed', 'all'].map((value) => ({ value, label: value }))} />
        {tickets.isPending ? <Loading /> : null}
        {tickets.isError ? <Alert tone="error">{errorMessage(tickets.error)}</Alert> : null}
        {tickets.data?.data.length === 0 ? <p className="empty">No tickets.</p> : null}
        {tickets.data === undefined || tickets.data.data.length === 0 ? null : (
          <div className="table-scroll"><table className="table table-cards" data-testid="tickets-table"><caption className="visually-hidden">Tickets</caption>
            <thead><tr><th scope="col">Subject</th><th scope="col">From</th><th scope="col">Status</th><th scope="col">Opened</th></tr></thead>
            <tbody>{tickets.data.data.map((ticket) => (
              <tr key={ticket.id}>
                <th scope="row"><button type="button" className="link-button" onClick={() => setSelected(ticket.id)}>{ticket.subject}</button></th>
                <td data-label="From" className="wrap-anywhere">{ticket.email}</td><td data-label="Status"><Badge tone={ticket.status === 'open' ? 'warning' : ticket.status === 'answered' ? 'info' : 'neutral'}>{ticket.status}</Badge></td><td data-label="Opened">{formatDateTime(ticket.created_at)}</td>
              </tr>
            ))}</tbody></table></div>
        )}
      </Card>
      {selected === null ? null : <TicketThread key={selected} id={selected} canReply={me.data?.permissions.includes('support:reply') === true} />}
    </div>
  );
}
