import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { ListPage, SupportTicket } from '../../api/money-types';
import { formatDateTime } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { FieldFrame, SelectField, TextField } from '../../ui/field';

const CATEGORIES = [
  { value: 'technical', label: 'Technical (requests, errors, models)' },
  { value: 'billing', label: 'Billing (payments, invoices)' },
  { value: 'account', label: 'Account (sign-in, members)' },
  { value: 'other', label: 'Something else' },
];
const STATUS_TONE: Record<string, 'info' | 'success' | 'neutral'> = { open: 'info', answered: 'success', closed: 'neutral' };

function TicketForm() {
  const api = useApi();
  const queryClient = useQueryClient();
  const [subject, setSubject] = useState('');
  const [category, setCategory] = useState('technical');
  const [message, setMessage] = useState('');
  const [requestId, setRequestId] = useState('');
  const open = useMutation({
    mutationFn: () => api.post<SupportTicket>('/api/console/support/tickets', { subject, category, message, request_id: requestId.trim() === '' ? null : requestId.trim() }),
    onSuccess: async () => {
      setSubject('');
      setMessage('');
      setRequestId('');
      await queryClient.invalidateQueries({ queryKey: ['tickets'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    open.mutate();
  };
  return (
    <Card title="Write to support">
      <form className="stack" onSubmit={submit} noValidate>
        {open.isError ? <Alert tone="error">{errorMessage(open.error)}</Alert> : null}
        {open.isSuccess ? <Alert tone="success">Ticket {open.data.id} is open. A confirmation is on its way to {open.data.email}; replies arrive by mail and below.</Alert> : null}
        <div className="form-grid">
          <TextField label="Subject" name="subject" value={subject} onChange={(event) => setSubject(event.target.value)} maxLength={200} required />
          <SelectField label="Category" name="category" value={category} onChange={(event) => setCategory(event.target.value)} options={CATEGORIES} />
        </div>
        <FieldFrame label="Message">
          {({ inputId, describedBy }) => <textarea id={inputId} aria-describedby={describedBy} name="message" rows={6} value={message} onChange={(event) => setMessage(event.target.value)} maxLength={20000} required />}
        </FieldFrame>
        <TextField label="Request id (optional)" name="request-id" value={requestId} onChange={(event) => setRequestId(event.target.value)} spellCheck={false}
          hint="The x-request-id header of a failed answer, or the request id on the Usage page: it lets support find the request." />
        <div className="form-actions"><Button type="submit" variant="primary" busy={open.isPending} disabled={subject.trim() === '' || message.trim() === ''}>Send</Button></div>
      </form>
    </Card>
  );
}

function TicketView({ ticket }: { ticket: SupportTicket }) {
  const [expanded, setExpanded] = useState(false);
  return (
    <li className="ticket">
      <div className="ticket-head">
        <button type="button" className="button button-ghost ticket-toggle" aria-expanded={expanded} onClick={() => setExpanded((value) => !value)}>
          <span className="key-name">{ticket.subject}</span>
        </button>
        <Badge tone={STATUS_TONE[ticket.status] ?? 'neutral'}>{ticket.status}</Badge>
      </div>
      <span className="key-meta">{ticket.category} · {formatDateTime(ticket.created_at)} · {ticket.id}{ticket.request_id === null ? '' : ` · request ${ticket.request_id}`}</span>
      {expanded ? (
        <div className="ticket-thread">
          <p className="ticket-message">{ticket.message}</p>
          {(ticket.replies ?? []).map((reply) => (
            <div key={reply.id} className="ticket-reply">
              <span className="key-meta">{reply.author === 'operator' ? 'Support' : 'You'} · {formatDateTime(reply.created_at)}</span>
              <p className="ticket-message">{reply.body}</p>
            </div>
          ))}
        </div>
      ) : null}
    </li>
  );
}

export function SupportPage() {
  useDocumentTitle('Support');
  const api = useApi();
  const tickets = useQuery({ queryKey: ['tickets'], queryFn: () => api.get<ListPage<SupportTicket>>('/api/console/support/tickets', { limit: '50' }) });
  return (
    <div className="page stack">
      <PageHeader title="Support" description="Ask the gateway's operator for help; answers come by mail and show here." />
      <TicketForm />
      <Card title="Your tickets">
        {tickets.isPending ? <Loading /> : tickets.isError ? <Alert tone="error">{errorMessage(tickets.error)}</Alert> : tickets.data.data.length === 0 ? (
          <p className="empty">No tickets yet.</p>
        ) : (
          <ul className="ticket-list">{tickets.data.data.map((ticket) => <TicketView key={ticket.id} ticket={ticket} />)}</ul>
        )}
      </Card>
    </div>
  );
}
