import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../api/client';
import type { AdminAccount, AdminAccountDetail, AdminListPage, GuardrailNames } from '../../api/operator-types';
import type { ApiKey, SignUpCredit } from '../../api/types';
import { formatCost, formatDateTime, formatUsd } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { TextField } from '../../ui/field';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { canWrite, useOperatorAction, useOperatorGet, useOperatorMe } from './operator-queries';
import { AccountLedger } from './account-ledger';
import { GuardrailPicker } from '../keys/guardrail-picker';
import type { GuardrailPolicyListJson, UserStandingListJson } from '../../../../src/contract/index.js';

/** The account's sign-up credit in a few words (operators see why one was not given). */
function signUpCreditText(credit: SignUpCredit | null | undefined): string | null {
  if (credit == null) return null;
  switch (credit.state) {
    case 'granted': return `${formatUsd(credit.amount_usd)} given${credit.expires_at == null ? '' : `, until ${formatDateTime(credit.expires_at)}`}`;
    case 'expired': return `${formatUsd(credit.amount_usd)} given, ${formatUsd(credit.taken_back_usd)} taken back at expiry`;
    case 'offered': return `${formatUsd(credit.amount_usd)} once the email is verified`;
    default: return `not given (${(credit.reason ?? '').replace(/_/g, ' ')})`;
  }
}

/** The console user behind an account's email: lock or unlock, and reset a lost second factor after an identity check. */
function SignInStatus({ email, writable }: { email: string; writable: boolean }) {
  const users = useOperatorGet<UserStandingListJson>('users', { email });
  const action = useOperatorAction();
  const [reason, setReason] = useState('');
  const [identityCheck, setIdentityCheck] = useState('');
  const user = users.data?.data[0];
  if (users.isPending) return <Loading />;
  if (user === undefined) return <p className="empty">No console user signs in with this email.</p>;
  const path = `users/${encodeURIComponent(user.id)}`;
  return (
    <div className="stack" data-testid="sign-in-status">
      <p>
        {user.locked === null ? <Badge tone="success">can sign in</Badge> : <Badge tone="danger">locked</Badge>}{' '}
        {user.two_factor_enabled ? <Badge tone="info">two-factor on</Badge> : <Badge tone="neutral">no second factor</Badge>}{' '}
        <span className="field-hint">{user.active_sessions} active sessions{user.locked === null ? '' : ` · locked ${formatDateTime(user.locked.locked_at)}: ${user.locked.reason}`}</span>
      </p>
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      {writable ? (
        <div className="form-grid">
          {user.locked === null ? (
            <form className="stack" onSubmit={(event) => { event.preventDefault(); action.mutate({ method: 'POST', path: `${path}/lock`, body: { reason } }, { onSuccess: () => setReason('') }); }}>
              <TextField label="Reason to lock" value={reason} onChange={(event) => setReason(event.target.value)} required minLength={3} maxLength={500} hint="Ends every session at once." />
              <div className="form-actions"><Button variant="danger" type="submit" busy={action.isPending}>Lock</Button></div>
            </form>
          ) : (
            <div className="form-actions"><Button onClick={() => action.mutate({ method: 'POST', path: `${path}/unlock` })} busy={action.isPending}>Unlock</Button></div>
          )}
          {user.two_factor_enabled ? (
            <form className="stack" onSubmit={(event) => { event.preventDefault(); action.mutate({ method: 'POST', path: `${path}/reset-two-factor`, body: { identity_check: identityCheck } }, { onSuccess: () => setIdentityCheck('') }); }}>
              <TextField label="How was their identity checked?" value={identityCheck} onChange={(event) => setIdentityCheck(event.target.value)} required minLength={10} maxLength={1000} hint="Kept in the audit log." />
              <div className="form-actions"><Button variant="danger" type="submit" busy={action.isPending}>Reset two-factor</Button></div>
            </form>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

/**
 * The guardrail policies bound to the account itself: they run on every request of its keys, beside the model's,
 * project's and key's. Any policy of the operator may be bound here, offered to accounts or not.
 */
function AccountGuardrails({ path, bound, writable }: { path: string; bound: GuardrailNames; writable: boolean }) {
  const policies = useOperatorGet<GuardrailPolicyListJson>('admin/guardrails');
  const action = useOperatorAction<AdminAccountDetail>();
  const [chosen, setChosen] = useState<string[]>([...bound]);
  const [saved, setSaved] = useState(false);
  const changed = [...chosen].sort().join('\n') !== [...bound].sort().join('\n');
  if (policies.isPending) return <Loading />;
  if (policies.isError) return <Alert tone="error">{errorMessage(policies.error)}</Alert>;
  const all = policies.data.data;
  if (!writable) return bound.length === 0 ? <p className="empty">No policy bound to the account.</p> : <p data-testid="account-guardrails">Bound: <span className="mono">{bound.join(', ')}</span></p>;
  if (all.length === 0) return <p className="empty">No guardrail policies yet: create one on the Guardrails page.</p>;
  return (
    <form className="stack" aria-label="Account guardrails" data-testid="account-guardrails"
      onSubmit={(event) => { event.preventDefault(); setSaved(false); action.mutate({ method: 'PATCH', path, body: { guardrails: chosen } }, { onSuccess: () => setSaved(true) }); }}>
      <GuardrailPicker legend="Policies bound to the account" offered={all} initial={bound} chosen={chosen} onChange={(next) => { setSaved(false); setChosen(next); }}
        hint="Bound to the account, a policy runs on every request of its keys, whatever the model, project or key; the account cannot remove it." />
      {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
      {saved && !changed ? <Alert tone="success">Guardrails saved. Every instance applies them to the next request.</Alert> : null}
      <div className="form-actions"><Button variant="primary" type="submit" busy={action.isPending} disabled={!changed}>Save guardrails</Button></div>
    </form>
  );
}

const STATUS_TONE = { enabled: 'success', disabled: 'warning', deleted: 'danger' } as const;

type StatusChange = 'disable' | 'enable' | 'delete';

const STATUS_CHANGE_TEXT: Record<StatusChange, { title: string; consequence: string; confirm: string }> = {
  disable: {
    title: 'Disable account', confirm: 'Disable',
    consequence: 'Every key of the account answers 403 at once, on every instance, and its console users are signed out. Nothing is deleted; enabling it again restores everything.',
  },
  enable: { title: 'Enable account', confirm: 'Enable', consequence: 'Its keys answer again and its users can sign in.' },
  delete: {
    title: 'Delete account', confirm: 'Delete for good',
    consequence: 'Every key is revoked, subscriptions cancelled, sessions ended and personal data erased. Ledger entries, invoices and usage rows are kept for accounting. This cannot be undone.',
  },
};

/** Disable, enable or delete an account, each after a confirmation that says what it does. */
function AccountStatus({ account, path }: { account: AdminAccount; path: string }) {
  const action = useOperatorAction();
  const [change, setChange] = useState<StatusChange | null>(null);
  const [typed, setTyped] = useState('');
  if (account.status === 'deleted') return null;
  const apply = () => {
    if (change === null) return;
    const request = change === 'delete' ? { method: 'DELETE' as const, path } : { method: 'PATCH' as const, path, body: { status: change === 'disable' ? 'disabled' : 'enabled' } };
    action.mutate(request, { onSuccess: () => { setChange(null); setTyped(''); } });
  };
  const text = change === null ? null : STATUS_CHANGE_TEXT[change];
  return (
    <>
      <div className="form-actions">
        {account.status === 'enabled'
          ? <Button onClick={() => { action.reset(); setChange('disable'); }}>Disable account</Button>
          : <Button onClick={() => { action.reset(); setChange('enable'); }}>Enable account</Button>}
        <Button variant="danger" onClick={() => { action.reset(); setChange('delete'); }}>Delete account</Button>
      </div>
      <Dialog open={change !== null} title={text?.title ?? ''} onClose={() => setChange(null)}>
        {change === null || text === null ? null : (
          <form className="stack" onSubmit={(event) => { event.preventDefault(); apply(); }}>
            <p><strong>{account.email}</strong>: {text.consequence}</p>
            {change === 'delete' ? <TextField label="Type the account's email to confirm" value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" required /> : null}
            {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={() => setChange(null)}>Cancel</Button>
              <Button variant={change === 'enable' ? 'primary' : 'danger'} type="submit" busy={action.isPending} disabled={change === 'delete' && typed.trim().toLowerCase() !== account.email.toLowerCase()}>{text.confirm}</Button>
            </div>
          </form>
        )}
      </Dialog>
    </>
  );
}

function AccountDetail({ account, writable }: { account: AdminAccount; writable: boolean }) {
  const path = `admin/accounts/${encodeURIComponent(account.id)}`;
  const detail = useOperatorGet<AdminAccountDetail>(path);
  const keys = useOperatorGet<AdminListPage<ApiKey>>(`${path}/keys`, { limit: '100' });
  const action = useOperatorAction();
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const credit = (event: FormEvent) => {
    event.preventDefault();
    action.mutate({ method: 'POST', path: `${path}/credits`, body: { amount_usd: amount, ...(reason === '' ? {} : { reason }) } }, { onSuccess: () => { setAmount(''); setReason(''); } });
  };
  const current: AdminAccount & { sign_up_credit?: SignUpCredit | null } = detail.data ?? account;
  return (
    <Card title={current.email}>
      <dl className="stat-strip">
        <div className="stat"><dt>Balance</dt><dd data-testid="account-balance">{formatUsd(current.balance_usd)}</dd></div>
        <div className="stat"><dt>Tier</dt><dd>{current.tier}</dd></div>
        <div className="stat"><dt>Credit line</dt><dd>{formatUsd(current.credit_line_usd)}</dd></div>
        {signUpCreditText(current.sign_up_credit) === null ? null : <div className="stat"><dt>Sign-up credit</dt><dd className="stat-text" data-testid="account-sign-up-credit">{signUpCreditText(current.sign_up_credit)}</dd></div>}
        <div className="stat"><dt>Status</dt><dd data-testid="account-status"><Badge tone={STATUS_TONE[current.status]}>{current.status}</Badge></dd></div>
      </dl>
      {writable ? <AccountStatus account={current} path={path} /> : null}
      {writable && current.status !== 'deleted' ? (
        <form className="stack" onSubmit={credit} aria-label="Credit or debit">
          <div className="form-grid">
            <TextField label="Amount (USD)" value={amount} onChange={(event) => setAmount(event.target.value)} required inputMode="decimal" pattern="-?[0-9]+(\.[0-9]+)?" hint="Negative to debit." />
            <TextField label="Reason" value={reason} onChange={(event) => setReason(event.target.value)} maxLength={200} hint="Kept in the ledger and the audit log." />
          </div>
          {action.isError ? <Alert tone="error">{errorMessage(action.error)}</Alert> : null}
          <div className="form-actions"><Button variant="primary" type="submit" busy={action.isPending}>Apply</Button></div>
        </form>
      ) : null}
      <h3>Guardrails</h3>
      {detail.data === undefined ? <Loading /> : <AccountGuardrails path={path} bound={detail.data.guardrails ?? []} writable={writable && current.status !== 'deleted'} />}
      <h3>Sign-in</h3>
      <SignInStatus email={current.email} writable={writable} />
      <h3>Keys</h3>
      {keys.isPending ? <Loading /> : null}
      {keys.data?.data.length === 0 ? <p className="empty">No keys.</p> : null}
      {keys.data === undefined || keys.data.data.length === 0 ? null : (
        <div className="table-scroll"><table className="table table-cards"><caption className="visually-hidden">Keys of {current.email}</caption>
          <thead><tr><th scope="col">Key</th><th scope="col">State</th><th scope="col" className="numeric">Spent</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>{keys.data.data.map((key) => (
            <tr key={key.id}>
              <th scope="row">{key.name || '(unnamed)'} <span className="key-meta mono">{key.hint}</span></th>
              <td data-label="State"><Badge tone={key.status === 'enabled' ? 'success' : 'neutral'}>{key.status}</Badge></td>
              <td data-label="Spent" className="numeric">{formatCost(key.spent_usd)}</td>
              <td className="cell-actions">{writable && key.status !== 'revoked' ? (
                <>
                  <Button variant="ghost" onClick={() => action.mutate({ method: 'PATCH', path: `admin/keys/${encodeURIComponent(key.id)}`, body: { status: key.status === 'disabled' ? 'enabled' : 'disabled' } })}>{key.status === 'disabled' ? 'Enable' : 'Disable'}</Button>
                  <Button variant="danger" onClick={() => action.mutate({ method: 'PATCH', path: `admin/keys/${encodeURIComponent(key.id)}`, body: { status: 'revoked' } })}>Revoke</Button>
                </>
              ) : null}</td>
            </tr>
          ))}</tbody></table></div>
      )}
      <h3>Ledger</h3>
      <AccountLedger path={path} email={current.email} />
    </Card>
  );
}

/** Accounts a page holds; the server finds them by email, id or billing-name prefix and pages with a cursor. */
const PAGE_SIZE = '50';

/** Every account: balances, credit and debit with a reason, keys, ledger. */
export function OperatorAccountsPage() {
  useDocumentTitle('Accounts');
  const me = useOperatorMe();
  const [search, setSearch] = useState('');
  // The cursors of the pages before the one shown (the first page has none).
  const [cursors, setCursors] = useState<string[]>([]);
  const [selected, setSelected] = useState<AdminAccount | null>(null);
  const cursor = cursors[cursors.length - 1];
  const accounts = useOperatorGet<AdminListPage<AdminAccount>>('admin/accounts', { q: search.trim() === '' ? undefined : search.trim(), limit: PAGE_SIZE, cursor });
  const shown = accounts.data?.data ?? [];
  const nextCursor = accounts.data?.next_cursor ?? null;
  return (
    <div className="page stack">
      <PageHeader title="Accounts" description="Balances, credits with a reason, keys and ledger of every account." />
      <Card>
        <TextField label="Search by email or id" type="search" value={search} hint="The start of an email, an account id or a billing name."
          onChange={(event) => { setSearch(event.target.value); setCursors([]); }} />
        {accounts.isPending ? <Loading /> : null}
        {accounts.isError ? <Alert tone="error">{errorMessage(accounts.error)}</Alert> : null}
        {accounts.data !== undefined && shown.length === 0 ? <p className="empty">{search.trim() === '' ? 'No accounts yet.' : 'No account starts with this.'}</p> : null}
        {shown.length === 0 ? null : (
          <div className="table-scroll"><table className="table table-cards" data-testid="accounts-table"><caption className="visually-hidden">Accounts</caption>
            <thead><tr><th scope="col">Email</th><th scope="col">Status</th><th scope="col">Tier</th><th scope="col" className="numeric">Balance</th><th scope="col">Since</th></tr></thead>
            <tbody>{shown.map((account) => (
              <tr key={account.id} aria-selected={selected?.id === account.id}>
                <th scope="row" className="wrap-anywhere"><button type="button" className="link-button" onClick={() => setSelected(account)}>{account.email}</button></th>
                <td data-label="Status"><Badge tone={STATUS_TONE[account.status]}>{account.status}</Badge></td>
                <td data-label="Tier">{account.tier}</td>
                <td data-label="Balance" className="numeric">{formatUsd(account.balance_usd)}</td>
                <td data-label="Since">{formatDateTime(account.created_at)}</td>
              </tr>
            ))}</tbody></table></div>
        )}
        {cursors.length === 0 && nextCursor === null ? null : (
          <div className="form-actions">
            <Button onClick={() => setCursors(cursors.slice(0, -1))} disabled={cursors.length === 0}>Previous page</Button>
            <Button onClick={() => { if (nextCursor !== null) setCursors([...cursors, nextCursor]); }} disabled={nextCursor === null}>Next page</Button>
          </div>
        )}
      </Card>
      {selected === null ? null : <AccountDetail key={selected.id} account={selected} writable={canWrite(me.data)} />}
    </div>
  );
}
