import { useState } from 'react';
import { useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatCost, formatDate, formatDateTime, formatInteger } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { Alert, Card, Loading, PageHeader } from '../../ui/feedback';
import { CustomerRuleForm } from './customer-rule-form';
import { useCustomerRules, useDeleteCustomerRule, usePutCustomerRule, type CustomerRule } from './customer-queries';

/** Roles that change end-customer rules (the console API's keys:write, as key budgets); the others read them. */
export function canEditCustomerRules(role: string | null | undefined): boolean {
  return role === 'owner' || role === 'admin' || role === 'developer';
}

/** A rule's rate limits in words ("No rate limits" when it has none). */
function rateLimits(rule: CustomerRule): string {
  const parts = [
    rule.rpm == null ? null : `${formatInteger(rule.rpm)} RPM`,
    rule.tpm == null ? null : `${formatInteger(rule.tpm)} TPM`,
    rule.concurrency == null ? null : `${formatInteger(rule.concurrency)} at once`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'No rate limits' : parts.join(' · ');
}

function budgetText(rule: CustomerRule): string {
  return rule.budget == null ? 'No budget' : `${formatCost(rule.budget.limit_usd)} per ${rule.budget.period}`;
}

/** What the dialog edits: a new customer's rule, one customer's, or the rule of every customer. */
type Editing = { kind: 'new' } | { kind: 'customer'; rule: CustomerRule } | { kind: 'every'; rule: CustomerRule | null };

export function CustomersPage() {
  useDocumentTitle('End customers');
  const session = useSession();
  const rules = useCustomerRules();
  const put = usePutCustomerRule();
  const remove = useDeleteCustomerRule();
  const [editing, setEditing] = useState<Editing | null>(null);
  const edits = canEditCustomerRules(session.data?.role);
  const every = rules.data?.data.find((rule) => rule.every_customer) ?? null;
  const own = (rules.data?.data ?? []).filter((rule) => !rule.every_customer).sort((left, right) => (left.customer ?? '').localeCompare(right.customer ?? ''));
  const open = (next: Editing) => {
    put.reset();
    setEditing(next);
  };
  const title = editing === null ? '' : editing.kind === 'new' ? 'Add a customer' : editing.kind === 'every' ? 'Every customer' : `Customer ${editing.rule.customer ?? ''}`;
  return (
    <div className="page stack">
      <PageHeader title="End customers"
        description="Budgets and rate limits for your own customers, as your requests name them (OpenAI user, Anthropic metadata.user_id or the x-gateway-customer header). A request past one is refused with a message naming the customer."
        actions={edits ? <Button variant="primary" onClick={() => open({ kind: 'new' })}>Add a customer</Button> : null} />
      {edits || rules.isError ? null : <Alert tone="info">Your role reads these rules; owners, admins and developers change them.</Alert>}
      {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
      {rules.isPending ? <Loading /> : rules.isError ? <Alert tone="error">{errorMessage(rules.error)}</Alert> : (
        <>
          <Card title="Every customer" actions={edits ? (
            <>
              <Button onClick={() => open({ kind: 'every', rule: every })}>{every === null ? 'Set a rule' : 'Edit'}</Button>
              {every === null ? null : <Button variant="danger" busy={remove.isPending && remove.variables === null} onClick={() => remove.mutate(null)}>Remove<span className="visually-hidden"> the rule of every customer</span></Button>}
            </>
          ) : null}>
            {every === null ? <p className="empty" data-testid="every-customer-rule">No rule for every customer: a customer without a rule of its own is limited only by the key and the account.</p> : (
              <dl className="stat-strip" data-testid="every-customer-rule">
                <div className="stat"><dt>Budget of each customer</dt><dd className="stat-small">{budgetText(every)}<span className="stat-note">{every.budget == null ? 'Spend is not capped' : `resets ${formatDateTime(every.budget.resets_at)}`}</span></dd></div>
                <div className="stat"><dt>Rate limits of each customer</dt><dd className="stat-small">{rateLimits(every)}<span className="stat-note">Each customer has its own window</span></dd></div>
                <div className="stat"><dt>Changed</dt><dd className="stat-small">{formatDate(every.updated_at)}</dd></div>
              </dl>
            )}
          </Card>
          <Card title="Customers with a rule of their own">
            <p className="field-hint">A customer's own rule replaces the rule of every customer as a whole: a rule without a budget or limits exempts that customer.</p>
            {own.length === 0 ? <p className="empty">No customer has a rule of its own yet.{edits ? ' Add one to give a customer its own budget, e.g. $50 a month.' : ''}</p> : (
              <div className="table-scroll">
                <table className="table table-cards" data-testid="customer-rules-table">
                  <caption className="visually-hidden">End customers with their own budget and limits</caption>
                  <thead>
                    <tr>
                      <th scope="col">Customer</th><th scope="col">Budget</th><th scope="col">Spent this period</th><th scope="col">Rate limits</th><th scope="col">Changed</th>
                      {edits ? <th scope="col"><span className="visually-hidden">Actions</span></th> : null}
                    </tr>
                  </thead>
                  <tbody>
                    {own.map((rule) => (
                      <tr key={rule.customer}>
                        <th scope="row" className="mono">{rule.customer}</th>
                        <td data-label="Budget">{budgetText(rule)}</td>
                        <td data-label="Spent this period">
                          {rule.budget == null ? '—' : (
                            <>
                              {formatCost(rule.budget.spent_usd ?? 0)}
                              <span className="key-meta">{formatCost(rule.budget.remaining_usd ?? 0)} left · resets {formatDateTime(rule.budget.resets_at)}</span>
                            </>
                          )}
                        </td>
                        <td data-label="Rate limits">{rateLimits(rule)}</td>
                        <td data-label="Changed">{formatDate(rule.updated_at)}</td>
                        {edits ? (
                          <td className="cell-actions">
                            <Button onClick={() => open({ kind: 'customer', rule })}>Edit<span className="visually-hidden"> {rule.customer}</span></Button>
                            <Button variant="danger" busy={remove.isPending && remove.variables === rule.customer} onClick={() => remove.mutate(rule.customer)}>Remove<span className="visually-hidden"> {rule.customer}</span></Button>
                          </td>
                        ) : null}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
        </>
      )}
      <Dialog open={editing !== null} title={title} onClose={() => setEditing(null)}>
        {editing === null ? null : (
          <CustomerRuleForm key={editing.kind === 'new' ? 'new' : editing.rule?.updated_at ?? 'every'}
            initial={editing.kind === 'new' ? null : editing.rule} everyCustomer={editing.kind === 'every'}
            submitLabel={editing.kind === 'new' ? 'Add customer' : 'Save rule'} busy={put.isPending} serverError={put.isError ? errorMessage(put.error) : null}
            onCancel={() => setEditing(null)} onSubmit={(input) => put.mutate(input, { onSuccess: () => setEditing(null) })} />
        )}
      </Dialog>
    </div>
  );
}
