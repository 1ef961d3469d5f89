import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import type { OperatorRow as Operator } from '../../api/operator-types';
import { formatDateTime } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { SelectField, TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { useOperatorAction, useOperatorGet, useOperatorMe, type OperatorMe } from './operator-queries';
import type { OperatorGrantJson, OperatorListJson } from '../../../../src/contract/index.js';

type Role = OperatorMe['role'];

const ROLES: { value: Role; label: string }[] = [
  { value: 'owner', label: 'Owner: everything, and operators' },
  { value: 'admin', label: 'Admin: every change' },
  { value: 'support', label: 'Support: reads, ticket replies' },
  { value: 'viewer', label: 'Viewer: reads only' },
];

function InviteForm({ onDone }: { onDone: (message: string) => void }) {
  const action = useOperatorAction<OperatorGrantJson>();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    action.mutate({ method: 'POST', path: 'operators', body: { email: email.trim(), role } }, {
      onSuccess: (answer) => onDone(answer.invited ? `Invited ${answer.email}: they choose a password from the mailed link.` : `${answer.email} is now an operator.`),
    });
  };
  return (
    <form className="stack" onSubmit={submit}>
      <TextField label="Email" type="email" value={email} onChange={(event) => setEmail(event.target.value)} required maxLength={254}
        hint="A person with a console account gets the role at once; anyone else is mailed a link to choose a password." />
      <SelectField label="Role" value={role} onChange={(event) => setRole(event.target.value as Role)} options={ROLES} />
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions"><Button onClick={() => onDone('')}>Cancel</Button><Button variant="primary" type="submit" busy={action.isPending}>Invite</Button></div>
    </form>
  );
}

function ResetTwoFactorForm({ operator, onDone }: { operator: Operator; onDone: (message: string) => void }) {
  const action = useOperatorAction();
  const [identityCheck, setIdentityCheck] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    action.mutate({ method: 'POST', path: `operators/${encodeURIComponent(operator.user_id)}/reset-two-factor`, body: { identity_check: identityCheck } }, {
      onSuccess: () => onDone(`Two-factor sign-in of ${operator.email ?? operator.user_id} was reset; their sessions ended.`),
    });
  };
  return (
    <form className="stack" onSubmit={submit}>
      <p>Their sessions end; operator pages wait until they turn two-factor sign-in on again.</p>
      <TextField label="How was their identity checked?" value={identityCheck} onChange={(event) => setIdentityCheck(event.target.value)} required minLength={10} maxLength={1000} hint="Kept in the audit log." />
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      <div className="form-actions"><Button onClick={() => onDone('')}>Cancel</Button><Button variant="danger" type="submit" busy={action.isPending}>Reset two-factor</Button></div>
    </form>
  );
}

function OperatorRow({ operator, self, manage, onReset }: { operator: Operator; self: boolean; manage: boolean; onReset: (operator: Operator) => void }) {
  const action = useOperatorAction();
  const path = `operators/${encodeURIComponent(operator.user_id)}`;
  const name = operator.email ?? operator.user_id;
  return (
    <tr data-operator={name}>
      <th scope="row" className="wrap-anywhere">{name}{self ? <span className="key-meta">you</span> : null}{action.isError ? <span className="field-error">{errorMessage(action.error)}</span> : null}</th>
      <td data-label="Role">
        {manage && !self ? (
          <select className="role-select" aria-label={`Role of ${name}`} value={operator.role} disabled={action.isPending}
            onChange={(event) => action.mutate({ method: 'PATCH', path, body: { role: event.target.value } })}>
            {ROLES.map((role) => <option key={role.value} value={role.value}>{role.value}</option>)}
          </select>
        ) : operator.role}
      </td>
      <td data-label="Status">{operator.status === 'active' ? <Badge tone="success">active</Badge> : <Badge tone="danger">disabled</Badge>}</td>
      <td data-label="Two-factor">{operator.two_factor_enabled ? <Badge tone="info">on</Badge> : <Badge tone="warning">not yet</Badge>}</td>
      <td data-label="Since">{formatDateTime(operator.created_at)}</td>
      <td className="cell-actions">{manage && !self ? (
        <>
          {operator.status === 'active'
            ? <Button variant="ghost" busy={action.isPending} onClick={() => action.mutate({ method: 'POST', path: `${path}/disable` })}>Disable<span className="visually-hidden"> {name}</span></Button>
            : <Button variant="ghost" busy={action.isPending} onClick={() => action.mutate({ method: 'POST', path: `${path}/enable` })}>Enable<span className="visually-hidden"> {name}</span></Button>}
          {operator.two_factor_enabled ? <Button variant="ghost" onClick={() => onReset(operator)}>Reset two-factor<span className="visually-hidden"> of {name}</span></Button> : null}
        </>
      ) : null}</td>
    </tr>
  );
}

/** Who operates the gateway, in which role; an owner invites, changes roles, disables and resets a lost second factor. */
export function OperatorOperatorsPage() {
  useDocumentTitle('Operators');
  const me = useOperatorMe();
  const manage = me.data?.permissions.includes('operators:manage') === true;
  const operators = useOperatorGet<OperatorListJson>('operators');
  const [inviting, setInviting] = useState(false);
  const [resetting, setResetting] = useState<Operator | null>(null);
  const [notice, setNotice] = useState('');
  const done = (message: string) => {
    setInviting(false);
    setResetting(null);
    setNotice(message);
  };
  return (
    <div className="page stack">
      <PageHeader title="Operators" description="People who run this gateway from the console. Every operator signs in with two-factor; every change is in the audit log."
        actions={manage ? <Button variant="primary" onClick={() => { setNotice(''); setInviting(true); }}>Invite operator</Button> : undefined} />
      {notice === '' ? null : <Alert tone="success">{notice}</Alert>}
      {manage ? null : <Alert tone="info">Only an owner changes operators.</Alert>}
      <Card>
        {operators.isPending ? <Loading /> : null}
        {operators.isError ? <Alert tone="error">{errorMessage(operators.error)}</Alert> : null}
        {operators.data === undefined ? null : (
          <div className="table-scroll"><table className="table table-cards" data-testid="operators-table"><caption className="visually-hidden">Operators</caption>
            <thead><tr><th scope="col">Operator</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Two-factor</th><th scope="col">Since</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>{operators.data.data.map((operator) => (
              <OperatorRow key={operator.user_id} operator={operator} self={operator.user_id === me.data?.user.id} manage={manage} onReset={(chosen) => { setNotice(''); setResetting(chosen); }} />
            ))}</tbody></table></div>
        )}
      </Card>
      <Dialog open={inviting} title="Invite an operator" onClose={() => setInviting(false)}>{inviting ? <InviteForm onDone={done} /> : null}</Dialog>
      <Dialog open={resetting !== null} title="Reset two-factor sign-in" onClose={() => setResetting(null)}>{resetting === null ? null : <ResetTwoFactorForm operator={resetting} onDone={done} />}</Dialog>
    </div>
  );
}
