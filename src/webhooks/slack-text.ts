/** One line of text for a Slack-compatible incoming webhook (`{"text": …}`), from the event's stored body. */
export function slackText(body: string): string {
  const event = JSON.parse(body) as { type: string; data: Record<string, unknown> };
  const data = event.data;
  const field = (name: string): string => {
    const value = data[name];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  };
  const usd = (name: string): string => (field(name) === '' ? '' : `$${field(name)}`);
  switch (event.type) {
    case 'account.balance_low':
      return `Balance alert: funds left ${usd('funds_left_usd')}, below the alert threshold of ${usd('threshold_usd')}.`;
    case 'key.quota_threshold_crossed':
      return `Quota alert: API key "${field('key_name') || field('key_hint')}" spent ${usd('spent_usd')} of its ${usd('quota_usd')} quota (alert at ${field('percent')}%).`;
    case 'subscription.quota_threshold_crossed':
      return `Quota alert: the "${field('plan_name')}" subscription used ${usd('used_usd')} of its ${usd('quota_usd')} quota this period (alert at ${field('percent')}%).`;
    case 'project.budget_threshold_crossed':
      return `Budget alert: project "${field('project_name') || field('project_id')}" spent ${usd('spent_usd')} of its ${usd('budget_usd')} budget for the ${field('budget_period')} (alert at ${field('percent')}%).`;
    case 'customer.budget_threshold_crossed':
      return `Budget alert: end customer "${field('customer')}" spent ${usd('spent_usd')} of its ${usd('budget_usd')} budget for the ${field('budget_period')} (alert at ${field('percent')}%).`;
    case 'key.paused':
      return field('reason') === 'budget'
        ? `API key "${field('key_name') || field('key_hint')}" is paused: it spent its ${usd('budget_usd')} budget for the ${field('budget_period')} (resets ${field('resets_at')}).`
        : `API key "${field('key_name') || field('key_hint')}" is paused: it spent its ${usd('quota_usd')} quota.`;
    case 'key.disabled':
      return `API key "${field('key_name') || field('key_hint')}" was disabled.`;
    case 'topup.succeeded':
      return `Top-up of ${usd('amount_usd')} credited.`;
    case 'refund.created':
      return `Refund: ${usd('amount_usd')} taken back from the balance.`;
    case 'invoice.issued':
      return `Invoice ${field('number')} issued (${field('kind')}).`;
    case 'plan.renewed':
      return `The "${field('plan_name')}" plan was renewed until ${field('period_end')}.`;
    case 'plan.ended':
      return `The "${field('plan_name')}" plan ended.`;
    case 'channel.down':
      return `Channel "${field('channel_name')}" is down (${field('reason')}).`;
    case 'channel.up':
      return `Channel "${field('channel_name')}" is back up.`;
    case 'webhook.test':
      return 'Test event: this endpoint receives the gateway\'s notifications.';
    default:
      return `Event ${event.type}.`;
  }
}
