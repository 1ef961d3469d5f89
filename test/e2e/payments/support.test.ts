/**
 * Support over the wire: the console's form stores a ticket, mails the operator's support address and confirms to
 * the user (a real SMTP server captures both); the console lists the user's tickets with status and the
 * operator's replies, which the operator posts through the admin API and which reach the user by mail too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleActorIdentity } from '../../../src/console-billing/console-actor.js';
import { startConsoleTestServer, type ConsoleTestServer } from '../../support/console-test-auth.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { SmtpCapture } from '../../support/smtp-capture.js';
import { admin, expectError, sleep, uniqueName } from '../admin/helpers.js';
import { consoleCall, newAccount } from './helpers.js';

const SUPPORT = 'support@gateway.example';
let smtp: SmtpCapture;
let gateway: TestGateway;
let consoleServer: ConsoleTestServer;

interface TicketJson {
  id: string; status: string; subject: string; category: string; request_id: string | null; user_id: string;
  replies: Array<{ author: string; body: string }>;
}

beforeAll(async () => {
  smtp = new SmtpCapture();
  await smtp.start();
  gateway = await startTestGateway({ env: { SMTP_URL: smtp.url(), SUPPORT_EMAIL: SUPPORT, MAIL_FROM: 'Gateway <noreply@gateway.example>' } });
  consoleServer = await startConsoleTestServer(gateway.gateway.services);
});

afterAll(async () => {
  await consoleServer?.close();
  await gateway?.close();
  await smtp?.stop();
});

async function mailsTo(address: string, count: number): Promise<typeof smtp.messages> {
  for (let attempt = 0; attempt < 50 && smtp.to(address).length < count; attempt += 1) await sleep(50);
  return smtp.to(address);
}

describe('support tickets', () => {
  it('stores the ticket, mails the operator and confirms to the user; the operator\'s reply shows in the console and by mail', async () => {
    const email = `${uniqueName('help')}@example.com`;
    const owner: ConsoleActorIdentity = { accountId: await newAccount(gateway, email), userId: uniqueName('user'), role: 'owner', email };
    const opened = await consoleCall<TicketJson>(consoleServer.url, owner, 'POST', '/api/console/support/tickets', {
      subject: 'A request failed', category: 'technical', message: 'The request below answered 502.\nWhat happened?', request_id: 'req_0123456789abcdef',
    });
    expect(opened.status, opened.text).toBe(201);
    expect(opened.body).toMatchObject({ status: 'open', subject: 'A request failed', category: 'technical', request_id: 'req_0123456789abcdef', replies: [] });

    const [toOperator] = await mailsTo(SUPPORT, 1);
    expect(toOperator?.subject).toBe(`[${opened.body.id}] technical: A request failed`);
    expect(toOperator?.text).toContain('req_0123456789abcdef');
    expect(toOperator?.text).toContain(owner.accountId);
    expect(toOperator?.text).toContain('What happened?');
    const [confirmation] = await mailsTo(email, 1);
    expect(confirmation?.subject).toContain(opened.body.id);
    expect(confirmation?.text).toContain('The request below answered 502.');

    const queue = await admin<{ data: TicketJson[] }>(gateway, 'GET', '/admin/support/tickets?status=open');
    expect(queue.body.data.map((ticket) => ticket.id)).toContain(opened.body.id);
    const reply = await admin<TicketJson>(gateway, 'POST', `/admin/support/tickets/${opened.body.id}/replies`, { body: 'The upstream was down for a minute; retried requests succeed.' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.status).toBe('answered');

    const listed = await consoleCall<{ data: TicketJson[] }>(consoleServer.url, owner, 'GET', '/api/console/support/tickets');
    expect(listed.body.data).toEqual([expect.objectContaining({ id: opened.body.id, status: 'answered', replies: [expect.objectContaining({ author: 'operator', body: 'The upstream was down for a minute; retried requests succeed.' })] })]);
    const replyMails = await mailsTo(email, 2);
    expect(replyMails[1]?.subject).toBe(`Re: A request failed [${opened.body.id}]`);
    expect(replyMails[1]?.text).toContain('retried requests succeed');

    const closed = await admin<TicketJson>(gateway, 'POST', `/admin/support/tickets/${opened.body.id}/replies`, { body: 'Closing this.', status: 'closed' });
    expect(closed.body.status).toBe('closed');
  });

  it('members other than owners and admins see only their own tickets; other accounts see none', async () => {
    const email = `${uniqueName('team')}@example.com`;
    const accountId = await newAccount(gateway, email);
    const owner: ConsoleActorIdentity = { accountId, userId: uniqueName('owner'), role: 'owner', email };
    const developer: ConsoleActorIdentity = { accountId, userId: uniqueName('dev'), role: 'developer', email: `dev-${email}` };
    const ownerTicket = await consoleCall<TicketJson>(consoleServer.url, owner, 'POST', '/api/console/support/tickets', { subject: 'Invoice address', category: 'billing', message: 'Please change it.' });
    const developerTicket = await consoleCall<TicketJson>(consoleServer.url, developer, 'POST', '/api/console/support/tickets', { subject: 'Rate limits', category: 'technical', message: 'Can we get more?' });
    expect(ownerTicket.status).toBe(201);
    expect(developerTicket.status).toBe(201);
    const seenByOwner = await consoleCall<{ data: TicketJson[] }>(consoleServer.url, owner, 'GET', '/api/console/support/tickets');
    expect(seenByOwner.body.data.map((ticket) => ticket.id).sort()).toEqual([ownerTicket.body.id, developerTicket.body.id].sort());
    const seenByDeveloper = await consoleCall<{ data: TicketJson[] }>(consoleServer.url, developer, 'GET', '/api/console/support/tickets');
    expect(seenByDeveloper.body.data.map((ticket) => ticket.id)).toEqual([developerTicket.body.id]);
    expectError(await consoleCall(consoleServer.url, developer, 'GET', `/api/console/support/tickets/${ownerTicket.body.id}`), { status: 404 });
    const stranger: ConsoleActorIdentity = { accountId: await newAccount(gateway, `${uniqueName('x')}@example.com`), userId: 'u', role: 'owner', email: 'x@example.com' };
    expectError(await consoleCall(consoleServer.url, stranger, 'GET', `/api/console/support/tickets/${ownerTicket.body.id}`), { status: 404 });
  });

  it('refuses incomplete or unknown input with the error object', async () => {
    const email = `${uniqueName('bad')}@example.com`;
    const owner: ConsoleActorIdentity = { accountId: await newAccount(gateway, email), userId: 'u', role: 'owner', email };
    expectError(await consoleCall(consoleServer.url, owner, 'POST', '/api/console/support/tickets', { subject: '', category: 'billing', message: 'x' }), { status: 400, param: 'subject' });
    expectError(await consoleCall(consoleServer.url, owner, 'POST', '/api/console/support/tickets', { subject: 'a', category: 'sales', message: 'x' }), { status: 400, param: 'category' });
    expectError(await consoleCall(consoleServer.url, owner, 'POST', '/api/console/support/tickets', { subject: 'a', category: 'other', message: 'x', priority: 'urgent' }), { status: 400 });
    expectError(await consoleCall(consoleServer.url, owner, 'POST', '/api/console/support/tickets', { subject: 'a', category: 'other', message: 'x', request_id: 'not a request id' }), { status: 400, param: 'request_id' });
    expectError(await admin(gateway, 'POST', '/admin/support/tickets/tkt_missing/replies', { body: 'hello' }), { status: 404 });
    expectError(await admin(gateway, 'GET', '/admin/support/tickets?status=pending'), { status: 400, param: 'status' });
  });
});
