import { describe, expect, it } from 'vitest';
import { composeAlertMail } from '../../../src/alerts/alert-mail.js';
import type { AlertState } from '../../../src/storage/repositories/alert-repository.js';

const USD = 1_000_000_000n;

function alert(overrides: Partial<AlertState>): AlertState {
  return {
    kind: 'balance', subjectId: 'acct_1', accountId: 'acct_1', periodStart: 0, state: 'pending', valueNano: 4_990_000_000n, thresholdNano: 5n * USD,
    limitNano: null, percent: null, crossedAt: 0, attempts: 0, nextAttemptAt: 0, notifiedAt: null, lastError: null, updatedAt: 0, ...overrides,
  };
}

describe('composeAlertMail', () => {
  it('balance: exact figures to the account owner', () => {
    const mail = composeAlertMail(alert({}), { email: 'owner@example.com' });
    expect(mail.to).toBe('owner@example.com');
    expect(mail.subject).toBe('Balance alert: funds left $4.99, below $5.00');
    expect(mail.text).toContain('dropped to $4.99, below your alert threshold of $5.00');
  });

  it('balance below zero prints a signed amount', () => {
    expect(composeAlertMail(alert({ valueNano: -1_500_000_000n }), { email: 'a@b.c' }).subject).toContain('funds left -$1.50,');
  });

  it('prints money as the console does: whole cents cut toward zero, never a long tail of digits', () => {
    const mail = composeAlertMail(alert({ valueNano: 7_999_401_500n, thresholdNano: 8n * USD }), { email: 'a@b.c' });
    expect(mail.subject).toBe('Balance alert: funds left $7.99, below $8.00');
    expect(mail.text).not.toMatch(/\$\d+\.\d{3}/);
  });

  it('project and end-customer budgets name the subject, the budget\'s period and its start', () => {
    const figures = { periodStart: Date.UTC(2026, 11, 6), valueNano: 30n * USD, thresholdNano: 25n * USD, limitNano: 50n * USD, percent: 50 };
    const project = composeAlertMail(alert({ kind: 'project_budget', subjectId: 'prj_1', ...figures }), { email: 'owner@example.com', project: { name: 'Search' }, budgetPeriod: 'month' });
    expect(project.subject).toBe('Budget alert: Project "Search" reached 50% of its month budget');
    expect(project.text).toContain('has spent $30.00 of its $50.00 budget for the month starting 2026-12-06 (alert at 50%, $25.00)');
    const customer = composeAlertMail(alert({ kind: 'customer_budget', subjectId: 'acct_1:acme', ...figures }), { email: 'owner@example.com', customer: 'acme', budgetPeriod: 'day' });
    expect(customer.subject).toBe('Budget alert: End customer "acme" reached 50% of its day budget');
  });

  it('key quota names the key by name and hint, never more', () => {
    const mail = composeAlertMail(
      alert({ kind: 'key_quota', subjectId: 'key_1', valueNano: 8n * USD, thresholdNano: 8n * USD, limitNano: 10n * USD, percent: 80 }),
      { email: 'owner@example.com', key: { name: 'ci', hint: 'sk-…a1b2' } },
    );
    expect(mail.subject).toBe('Quota alert: API key "ci" (sk-…a1b2) reached 80% of its quota');
    expect(mail.text).toContain('has spent $8.00 of its $10.00 quota');
  });

  it('subscription quota names the plan and the period', () => {
    const mail = composeAlertMail(
      alert({ kind: 'subscription_quota', subjectId: 'sub_1', valueNano: 60n * USD, thresholdNano: 50n * USD, limitNano: 100n * USD, percent: 50 }),
      { email: 'owner@example.com', subscription: { planName: 'pro', periodStart: Date.UTC(2026, 0, 1), periodEnd: Date.UTC(2026, 1, 1) } },
    );
    expect(mail.subject).toBe('Quota alert: your "pro" subscription reached 50% of this period\'s quota');
    expect(mail.text).toContain('has used $60.00 of its $100.00 quota in the period 2026-01-01 to 2026-02-01');
  });
});
