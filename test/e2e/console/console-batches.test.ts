/**
 * The console's batches routes over real HTTP, held to roles and project scope: a viewer lists the account's
 * batches but can neither cancel one nor download its files (403); a member scoped to a project sees only the
 * batches of that project's keys (another's id answers 404) and changes them only with `developer` there; another
 * account reaches none (404). Answers parse with the console contract's schemas. The gateway runs no batch lines
 * here (BATCH_CONCURRENCY=0), so every batch stays cancellable.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleBatchAnswer, consoleBatchList } from '../../../src/contract/batches.js';
import type { AccountRole } from '../../../src/storage/repositories/console-repository.js';
import { addRoutedModel } from '../../support/gateway-harness.js';
import { type ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

const MODEL = 'batch-console-model';
let setup: ConsoleGateway;
let owner: SignedUpUser;

interface Member { client: ConsoleClient; userId: string }

async function inviteAndAccept(role: AccountRole): Promise<Member> {
  const email = uniqueEmail(role);
  const invited = await owner.client.request('POST', '/api/members/invitations', { email, role });
  expect(invited.status, invited.text).toBe(201);
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const client = setup.client();
  const accepted = await client.request<{ user: { id: string } }>('POST', '/api/invitations/accept', { token, password: strongPassword() });
  expect(accepted.status, accepted.text).toBe(200);
  return { client, userId: accepted.body.user.id };
}

/** A key of the owner's account (in `projectId` when given) and a batch of two lines made with it over the API. */
async function batchWithKey(projectId: string | null): Promise<string> {
  const created = await owner.client.request<{ secret: string }>('POST', '/api/keys', { name: `key ${projectId ?? 'default'}`, ...(projectId === null ? {} : { project_id: projectId }) });
  expect(created.status, created.text).toBe(201);
  const client = new OpenAI({ apiKey: created.body.secret, baseURL: setup.gateway.baseURL, maxRetries: 0 });
  const lines = [0, 1].map((index) => JSON.stringify({ custom_id: `line-${index}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `Hi ${index}` }], max_tokens: 10 } })).join('\n');
  const file = await client.files.create({ file: await toFile(Buffer.from(`${lines}\n`), 'in.jsonl'), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  expect(batch.status).toBe('in_progress');
  return batch.id;
}

function ids(body: unknown): string[] {
  return consoleBatchList.parse(body).data.map((batch) => batch.id);
}

beforeAll(async () => {
  setup = await startConsoleGateway({ BATCH_CONCURRENCY: '0', BATCH_PROVIDER_PASS_THROUGH: 'off' });
  await addRoutedModel(setup.gateway, {
    model: MODEL, pricing: { input_per_mtok: 2, output_per_mtok: 8 },
    channel: { name: 'batch-console-up', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } },
  });
  owner = await signUpUser(setup);
  expect((await setup.gateway.admin('POST', `/admin/accounts/${owner.accountId}/credits`, { amount_usd: 10 })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

describe('console batches', () => {
  it('lists for every role; cancelling and downloads need the right to use keys', async () => {
    const batchId = await batchWithKey(null);
    const viewer = await inviteAndAccept('viewer');
    const listed = await viewer.client.request('GET', '/api/console/batches');
    expect(listed.status, listed.text).toBe(200);
    const row = consoleBatchList.parse(listed.body).data.find((batch) => batch.id === batchId);
    expect(row).toMatchObject({ status: 'in_progress', total: 2, completed: 0, failed: 0, cost_nano: '0', cost_usd: 0, can_manage: false, ended_at: null, key_name: 'key default' });
    for (const [method, path] of [['POST', `/api/console/batches/${batchId}/cancel`], ['GET', `/api/console/batches/${batchId}/output`], ['GET', `/api/console/batches/${batchId}/errors`]] as const) {
      const refused = await viewer.client.request(method, path);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body).toMatchObject({ error: { code: 'forbidden' } });
    }

    const ownerRow = consoleBatchList.parse((await owner.client.request('GET', '/api/console/batches')).body).data.find((batch) => batch.id === batchId);
    expect(ownerRow?.can_manage).toBe(true);
    // No output yet: 404, not an empty file.
    expect((await owner.client.request('GET', `/api/console/batches/${batchId}/output`)).status).toBe(404);
    const cancelled = await owner.client.request('POST', `/api/console/batches/${batchId}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(consoleBatchAnswer.parse(cancelled.body).batch).toMatchObject({ id: batchId, status: 'cancelling' });
    // Again: answered as it is.
    const again = await owner.client.request('POST', `/api/console/batches/${batchId}/cancel`);
    expect(consoleBatchAnswer.parse(again.body).batch.status).toBe('cancelling');
  });

  it('another account neither sees nor cancels the batch', async () => {
    const batchId = await batchWithKey(null);
    const stranger = await signUpUser(setup);
    expect(ids((await stranger.client.request('GET', '/api/console/batches')).body)).toEqual([]);
    for (const [method, path] of [['POST', `/api/console/batches/${batchId}/cancel`], ['GET', `/api/console/batches/${batchId}/output`]] as const) {
      expect((await stranger.client.request(method, path)).status, `${method} ${path}`).toBe(404);
    }
    const stored = await setup.gateway.gateway.services.storage.batches.get(owner.accountId, batchId);
    expect(stored?.status).toBe('in_progress');
  });

  it('a member scoped to a project sees that project\'s batches only, and changes them only as its developer', async () => {
    const project = await owner.client.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'Batch project' });
    expect(project.status, project.text).toBe(201);
    const projectId = project.body.project.id;
    const inProject = await batchWithKey(projectId);
    const outside = await batchWithKey(null);
    const member = await inviteAndAccept('developer');

    expect((await owner.client.request('PUT', `/api/projects/${projectId}/members/${member.userId}`, { role: 'viewer' })).status).toBe(200);
    const asViewer = consoleBatchList.parse((await member.client.request('GET', '/api/console/batches')).body);
    expect(asViewer.data.map((batch) => batch.id)).toEqual([inProject]);
    expect(asViewer.data[0]).toMatchObject({ project_id: projectId, can_manage: false });
    expect((await member.client.request('POST', `/api/console/batches/${inProject}/cancel`)).status).toBe(403);
    expect((await member.client.request('POST', `/api/console/batches/${outside}/cancel`)).status).toBe(404);

    expect((await owner.client.request('PUT', `/api/projects/${projectId}/members/${member.userId}`, { role: 'developer' })).status).toBe(200);
    const asDeveloper = consoleBatchList.parse((await member.client.request('GET', '/api/console/batches')).body);
    expect(asDeveloper.data).toEqual([expect.objectContaining({ id: inProject, can_manage: true })]);
    expect((await member.client.request('POST', `/api/console/batches/${outside}/cancel`)).status).toBe(404);
    expect((await member.client.request('GET', `/api/console/batches/${outside}/output`)).status).toBe(404);
    const cancelled = await member.client.request('POST', `/api/console/batches/${inProject}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect((await setup.gateway.gateway.services.storage.batches.get(owner.accountId, outside))?.status).toBe('in_progress');
  });

  it('pages newest first by `after`, and refuses a bad limit', async () => {
    const made = [await batchWithKey(null), await batchWithKey(null), await batchWithKey(null)];
    const first = consoleBatchList.parse((await owner.client.request('GET', '/api/console/batches?limit=2')).body);
    expect(first.data.map((batch) => batch.id)).toEqual([made[2], made[1]]);
    expect(first.has_more).toBe(true);
    const second = consoleBatchList.parse((await owner.client.request('GET', `/api/console/batches?limit=2&after=${first.last_id}`)).body);
    expect(second.data[0]?.id).toBe(made[0]);
    expect((await owner.client.request('GET', `/api/console/batches?after=${'x'.repeat(101)}`)).status).toBe(400);
    for (const limit of ['0', '101', 'x', '-1']) {
      const refused = await owner.client.request('GET', `/api/console/batches?limit=${limit}`);
      expect(refused.status, limit).toBe(400);
    }
  });
});
