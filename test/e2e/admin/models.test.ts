/** /admin/models — prices in USD stored exactly, CRUD, validation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { admin, collectPages, expectError, uniqueName } from './helpers.js';

interface ModelJson {
  id: string;
  kind: string;
  public: boolean;
  upstream: string | null;
  pricing: Record<string, number | null>;
  limits: { rpm: number | null; tpm: number | null };
}

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

describe('model prices round-trip exactly in USD', () => {
  const pricings: Array<[string, Record<string, number>]> = [
    ['list prices', { input_per_mtok: 2.5, output_per_mtok: 10, cached_input_per_mtok: 1.25 }],
    ['cents', { input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075 }],
    ['tiny prices', { input_per_mtok: 0.000001, output_per_mtok: 0.000002, cached_input_per_mtok: 0.0000005 }],
    ['the smallest unit', { input_per_mtok: 0.000000001, output_per_mtok: 1e-7, cached_input_per_mtok: 0.000000003 }],
    ['decimals that are not binary fractions', { input_per_mtok: 0.1, output_per_mtok: 0.3, cached_input_per_mtok: 0.7 }],
    ['large and precise', { input_per_mtok: 123456.789012345, output_per_mtok: 75, cached_input_per_mtok: 0 }],
    ['every dimension', { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3, per_request: 0.004, per_image: 0.04, per_audio_minute: 0.006, per_mchar: 15 }],
  ];

  it.each(pricings)('%s', async (_label, pricing) => {
    const id = uniqueName('priced');
    const created = await admin<ModelJson>(gateway, 'POST', '/admin/models', { id, pricing });
    expect(created.status, created.text).toBe(201);
    expect(created.body.id).toBe(id);
    for (const [field, value] of Object.entries(pricing)) expect(created.body.pricing[field], field).toBe(value);
    const got = await admin<ModelJson>(gateway, 'GET', `/admin/models/${id}`);
    expect(got.status).toBe(200);
    for (const [field, value] of Object.entries(pricing)) expect(got.body.pricing[field], field).toBe(value);
  });

  it('accepts decimal strings and returns them as the same JSON numbers', async () => {
    const id = uniqueName('string-priced');
    const created = await admin<ModelJson>(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: '0.000001', output_per_mtok: '12.5' } });
    expect(created.status, created.text).toBe(201);
    const got = await admin<ModelJson>(gateway, 'GET', `/admin/models/${id}`);
    expect(got.body.pricing.input_per_mtok).toBe(0.000001);
    expect(got.body.pricing.output_per_mtok).toBe(12.5);
  });

  it('never rounds a price silently: finer than the stored unit is refused', async () => {
    const id = uniqueName('too-fine');
    const answer = await admin(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: 0.0000000001 } });
    expectError(answer, { status: 400, param: 'pricing.input_per_mtok' });
    expectError(await admin(gateway, 'GET', `/admin/models/${id}`), { status: 404 });
  });
});

describe('model CRUD', () => {
  it('creates, gets, lists, patches and deletes a model', async () => {
    const id = uniqueName('crud-model');
    const created = await admin<ModelJson>(gateway, 'POST', '/admin/models', {
      id, kind: 'chat', public: true, upstream: 'vendor-model-2025', pricing: { input_per_mtok: 1, output_per_mtok: 2 }, limits: { rpm: 60, tpm: 100000 },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ id, kind: 'chat', public: true, upstream: 'vendor-model-2025', limits: { rpm: 60, tpm: 100000 } });

    const listed = await collectPages<ModelJson>(gateway, '/admin/models', 200);
    expect(listed.items.map((model) => model.id)).toContain(id);

    const patched = await admin<ModelJson>(gateway, 'PATCH', `/admin/models/${id}`, { public: false, pricing: { input_per_mtok: 0.000004, output_per_mtok: 0.3 }, limits: { rpm: 5 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id, public: false, limits: { rpm: 5 } });
    expect(patched.body.pricing.input_per_mtok).toBe(0.000004);
    expect(patched.body.pricing.output_per_mtok).toBe(0.3);
    const got = await admin<ModelJson>(gateway, 'GET', `/admin/models/${id}`);
    expect(got.body).toMatchObject({ public: false, upstream: 'vendor-model-2025', limits: { rpm: 5 } });
    expect(got.body.pricing.input_per_mtok).toBe(0.000004);
    expect(got.body.pricing.output_per_mtok).toBe(0.3);

    const deleted = await admin(gateway, 'DELETE', `/admin/models/${id}`);
    expect(deleted.status).toBe(200);
    expectError(await admin(gateway, 'GET', `/admin/models/${id}`), { status: 404, code: 'not_found' });
    expectError(await admin(gateway, 'DELETE', `/admin/models/${id}`), { status: 404 });
    expectError(await admin(gateway, 'PATCH', `/admin/models/${id}`, { public: true }), { status: 404 });
  });

  it('refuses to delete a model another falls back to, naming it, and deletes it once that one lets go', async () => {
    const target = uniqueName('fallback-target');
    const main = uniqueName('fallback-main');
    expect((await admin(gateway, 'POST', '/admin/models', { id: target, pricing: { input_per_mtok: 1 } })).status).toBe(201);
    expect((await admin(gateway, 'POST', '/admin/models', { id: main, pricing: { input_per_mtok: 1 }, fallbacks: [target] })).status).toBe(201);
    const refused = expectError(await admin(gateway, 'DELETE', `/admin/models/${target}`), { status: 409, code: 'conflict' });
    expect(refused.message).toContain(main);
    expect((await admin(gateway, 'GET', `/admin/models/${target}`)).status).toBe(200);
    expect((await admin(gateway, 'PATCH', `/admin/models/${main}`, { fallbacks: [] })).status).toBe(200);
    expect((await admin(gateway, 'DELETE', `/admin/models/${target}`)).status).toBe(200);
  });

  it('handles ids with the allowed punctuation, including a slash (URL-encoded in the path)', async () => {
    for (const id of ['vendor/model-x.1', 'org@model:tag_2', 'Model.V2']) {
      const created = await admin<ModelJson>(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: 1 } });
      expect(created.status, `${id}: ${created.text}`).toBe(201);
      const got = await admin<ModelJson>(gateway, 'GET', `/admin/models/${encodeURIComponent(id)}`);
      expect(got.status, id).toBe(200);
      expect(got.body.id).toBe(id);
    }
  });

  it('refuses a duplicate id with 409', async () => {
    const id = uniqueName('dup-model');
    expect((await admin(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: 1 } })).status).toBe(201);
    expectError(await admin(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: 9 } }), { status: 409 });
    const got = await admin<ModelJson>(gateway, 'GET', `/admin/models/${id}`);
    expect(got.body.pricing.input_per_mtok).toBe(1);
  });

  it('pages the model list', async () => {
    for (let index = 0; index < 5; index += 1) {
      expect((await admin(gateway, 'POST', '/admin/models', { id: uniqueName(`paged-${index}`), pricing: {} })).status).toBe(201);
    }
    const all = await admin<{ data: ModelJson[]; has_more: boolean }>(gateway, 'GET', '/admin/models?limit=200');
    const { items } = await collectPages<ModelJson>(gateway, '/admin/models', 3);
    const ids = items.map((model) => model.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(all.body.data.map((model) => model.id).sort());
  });
});

describe('model validation', () => {
  const badIds: Array<[string, unknown]> = [
    ['a space', 'bad id'],
    ['an exclamation mark', 'model!'],
    ['a non-ASCII letter', 'modèle'],
    ['a leading dash', '-model'],
    ['an empty string', ''],
    ['a number', 42],
    ['a question mark', 'model?x=1'],
    ['a hash', 'model#1'],
    ['a percent sign', 'model%20x'],
  ];

  it.each(badIds)('refuses an id with %s (400, param id)', async (_label, id) => {
    expectError(await admin(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: 1 } }), { status: 400, param: 'id' });
  });

  it('refuses a missing id and missing pricing', async () => {
    expectError(await admin(gateway, 'POST', '/admin/models', { pricing: {} }), { status: 400, param: 'id' });
    expectError(await admin(gateway, 'POST', '/admin/models', { id: uniqueName('no-pricing') }), { status: 400, param: 'pricing' });
  });

  const badPrices: Array<[string, Record<string, unknown>, string]> = [
    ['a negative input price', { input_per_mtok: -1 }, 'pricing.input_per_mtok'],
    ['a negative output price', { output_per_mtok: -0.000001 }, 'pricing.output_per_mtok'],
    ['a negative cached price', { cached_input_per_mtok: -0.5 }, 'pricing.cached_input_per_mtok'],
    ['a negative per-request price', { per_request: -0.01 }, 'pricing.per_request'],
    ['a price that is not a number', { input_per_mtok: 'cheap' }, 'pricing.input_per_mtok'],
    ['a boolean price', { output_per_mtok: true }, 'pricing.output_per_mtok'],
  ];

  it.each(badPrices)('refuses %s (400 naming the field)', async (_label, pricing, param) => {
    const id = uniqueName('bad-price');
    expectError(await admin(gateway, 'POST', '/admin/models', { id, pricing }), { status: 400, param });
    expectError(await admin(gateway, 'GET', `/admin/models/${id}`), { status: 404 });
  });

  it('refuses a negative price on PATCH and keeps the old price', async () => {
    const id = uniqueName('patch-price');
    expect((await admin(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: 2 } })).status).toBe(201);
    expectError(await admin(gateway, 'PATCH', `/admin/models/${id}`, { pricing: { input_per_mtok: -2 } }), { status: 400, param: 'pricing.input_per_mtok' });
    const got = await admin<ModelJson>(gateway, 'GET', `/admin/models/${id}`);
    expect(got.body.pricing.input_per_mtok).toBe(2);
  });

  it('refuses an unknown pricing field and an unknown kind', async () => {
    expectError(await admin(gateway, 'POST', '/admin/models', { id: uniqueName('x'), pricing: { input_per_token: 1 } }), { status: 400 });
    expectError(await admin(gateway, 'POST', '/admin/models', { id: uniqueName('x'), kind: 'hologram', pricing: {} }), { status: 400, param: 'kind' });
  });
});
