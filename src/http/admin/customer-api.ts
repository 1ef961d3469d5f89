import { GatewayError } from '../../errors/gateway-error.js';
import type { CustomerRuleListJson, DeletedCustomerRuleJson } from '../../contract/customers.js';
import { parseInput } from '../../management/parse-input.js';
import type { RequestContext } from '../request-context.js';
import { sendJson } from '../respond.js';
import type { GatewayServices } from '../../services.js';
import { customerParam, customerRuleSchema, flatCustomerRuleSchema, flatRuleInput, ruleFromInput, ruleToJson, type CustomerRuleInput } from '../../customers/customer-input.js';
import { CUSTOMER_MAX_LENGTH } from '../../customers/request-identity.js';
import { EVERY_CUSTOMER } from '../../domain/customer-records.js';
import { reportCsv, reportJson, reportQuery } from '../../customers/customer-report.js';

/** Most rules one account keeps (the admission cache holds them all in memory). */
export const MAX_RULES_PER_ACCOUNT = 1000;

type Services = Pick<GatewayServices, 'storage' | 'clock' | 'invalidation' | 'ledger' | 'usageLog'>;

/** The account's rules, each customer's with its budget's spend in the current period. */
export async function listRules(services: Services, context: RequestContext, accountId: string): Promise<void> {
  const { storage, clock, ledger } = services;
  // Settlements queued on this instance count in the spend shown.
  await ledger.flush();
  const rules = await storage.customers.listRules(accountId);
  const spend = await storage.customers.spend(accountId, rules.filter((rule) => rule.customer !== EVERY_CUSTOMER && rule.budget !== null).map((rule) => rule.customer));
  const now = clock.now();
  sendJson(context, 200, { object: 'list', data: rules.map((rule) => ruleToJson(rule, spend.get(rule.customer), now)) } satisfies CustomerRuleListJson);
}

/** Creates or replaces a rule; every instance applies it before the answer is sent (or within a second without Redis). */
export async function putRule(services: Services, context: RequestContext, accountId: string, body: unknown): Promise<void> {
  await saveRule(services, context, accountId, parseInput(customerRuleSchema, body));
}

/** `PUT /admin/accounts/:id/customers/:customer` with the flat body (`budget_usd`, `period`, `rpm`, `tpm`, `concurrency`). */
export async function putFlatRule(services: Services, context: RequestContext, accountId: string, customer: string, body: unknown): Promise<void> {
  const input = parseInput(flatCustomerRuleSchema, body);
  const name = customer.trim();
  if (name !== '*' && !customerRuleSchema.shape.customer.safeParse(name).success) {
    throw new GatewayError('bad_request', `The customer in the path must be 1 to ${CUSTOMER_MAX_LENGTH} printable characters, or * for every customer.`, { param: 'customer' });
  }
  await saveRule(services, context, accountId, flatRuleInput(name, input));
}

async function saveRule(services: Services, context: RequestContext, accountId: string, input: CustomerRuleInput): Promise<void> {
  const { storage, clock, invalidation } = services;
  const rules = await storage.customers.listRules(accountId);
  const customer = input.customer ?? EVERY_CUSTOMER;
  const existing = rules.find((rule) => rule.customer === customer) ?? null;
  if (existing === null && rules.length >= MAX_RULES_PER_ACCOUNT) {
    throw new GatewayError('conflict', `An account has at most ${MAX_RULES_PER_ACCOUNT} end-customer rules; delete one, or set the rule of every customer.`);
  }
  const now = clock.now();
  const rule = ruleFromInput(accountId, input, existing, now);
  await storage.customers.putRule(rule);
  await invalidation.publish({ kind: 'customers', id: accountId });
  const spend = rule.budget === null || customer === EVERY_CUSTOMER ? undefined : (await storage.customers.spend(accountId, [customer])).get(customer);
  sendJson(context, existing === null ? 201 : 200, ruleToJson(rule, spend, now));
}

export async function deleteRule(services: Services, context: RequestContext, accountId: string): Promise<void> {
  const { storage, invalidation } = services;
  const customer = customerParam(context.query);
  if (!(await storage.customers.deleteRule(accountId, customer))) {
    throw new GatewayError('not_found', customer === EVERY_CUSTOMER ? 'This account has no rule for every customer.' : `This account has no rule for end customer '${customer}'.`);
  }
  await invalidation.publish({ kind: 'customers', id: accountId });
  sendJson(context, 200, { object: 'customer_rule', customer: customer === EVERY_CUSTOMER ? null : customer, deleted: true } satisfies DeletedCustomerRuleJson);
}

/**
 * A report by customer, tag or key per UTC day (`name`: customers, tags or keys), from the daily rollups: JSON, or
 * CSV when `csv`. `accountId` null: every account's (the operator's view, rows name the account).
 */
export async function sendReport(services: Services, context: RequestContext, name: string, accountId: string | null, csv: boolean): Promise<void> {
  const query = reportQuery(context.query, name, accountId, services.clock.now());
  // Rows queued on this instance are in the report.
  await services.usageLog.flush();
  const rows = await services.storage.customers.rollups(query);
  if (!csv) {
    sendJson(context, 200, reportJson(query, rows, accountId === null));
    return;
  }
  const response = context.response;
  response.statusCode = 200;
  response.setHeader('content-type', 'text/csv; charset=utf-8');
  response.setHeader('content-disposition', `attachment; filename="usage-by-${name}-${new Date(query.to).toISOString().slice(0, 10)}.csv"`);
  response.end(reportCsv(query, rows, accountId === null));
}
