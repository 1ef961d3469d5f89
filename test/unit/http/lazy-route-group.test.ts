/**
 * A route group mounted lazily: its router is built by the first request under its prefix (concurrent first requests
 * share the one build), a failed build is tried again by the next request, and its answers, 404 and 405 included,
 * are those of the listener's router. A single lazily loaded route keeps its place in its router's table the same way.
 * Over real HTTP through the listener.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClientIpResolver } from '../../../src/auth/client-ip.js';
import { createListener } from '../../../src/http/create-listener.js';
import { lazyRoute, lazyRouteGroup } from '../../../src/http/lazy-route-group.js';
import { sendJson } from '../../../src/http/respond.js';
import { Router } from '../../../src/http/router.js';
import { createLogger } from '../../../src/shared/logger.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(router: Router): Promise<string> {
  const server = createServer(createListener({ router, logger: createLogger('error', () => {}), clientIp: createClientIpResolver({ mode: 'none' }) }));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('a lazily mounted route group', () => {
  it('is built once by concurrent first requests, and answers each as its own router does', async () => {
    let builds = 0;
    let release = (): void => {};
    const held = new Promise<void>((resolve) => { release = resolve; });
    const router = new Router().add('GET', '/other', async (context) => sendJson(context, 200, { route: 'other' }));
    router.mount('/group', lazyRouteGroup(async () => {
      builds += 1;
      await held;
      return new Router()
        .add('GET', '/group/items/:id', async (context) => sendJson(context, 200, { id: context.params.id }))
        .add('POST', '/group/items', async (context) => sendJson(context, 201, { created: true }));
    }));
    const origin = await serve(router);
    const answers = Promise.all([
      fetch(`${origin}/group/items/a`),
      fetch(`${origin}/group/items/b%20c`),
      fetch(`${origin}/group/items`, { method: 'POST' }),
      fetch(`${origin}/group/items`, { method: 'DELETE' }),
      fetch(`${origin}/group/nothing`),
      fetch(`${origin}/group/items/%E0%A4%A`),
    ]);
    // Other routes answer while the group is still loading.
    const other = await fetch(`${origin}/other`);
    expect(await other.json()).toEqual({ route: 'other' });
    release();
    const [a, bc, created, deleted, nothing, malformed] = await answers;
    expect(await a?.json()).toEqual({ id: 'a' });
    expect(await bc?.json()).toEqual({ id: 'b c' });
    expect(created?.status).toBe(201);
    expect(deleted?.status).toBe(405);
    expect(deleted?.headers.get('allow')).toBe('POST');
    expect(((await deleted?.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    expect(nothing?.status).toBe(404);
    expect(((await nothing?.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect(malformed?.status).toBe(400);
    expect(builds).toBe(1);
    // The prefix itself without a slash is not the group's.
    expect((await fetch(`${origin}/group`)).status).toBe(404);
    expect((await fetch(`${origin}/group/items/z`)).status).toBe(200);
    expect(builds).toBe(1);
  });

  it('tries a failed build again at the next request', async () => {
    let builds = 0;
    const router = new Router();
    router.mount('/group', lazyRouteGroup(async () => {
      builds += 1;
      if (builds === 1) throw new Error('module failed to load');
      return new Router().add('GET', '/group/ok', async (context) => sendJson(context, 200, { ok: true }));
    }));
    const origin = await serve(router);
    const failed = await fetch(`${origin}/group/ok`);
    expect(failed.status).toBe(500);
    const retried = await fetch(`${origin}/group/ok`);
    expect(await retried.json()).toEqual({ ok: true });
    expect(builds).toBe(2);
  });
});

describe('a lazily loaded route', () => {
  it('is built once by concurrent first requests, keeps its params, and leaves the 404 and 405 around it unchanged before and after', async () => {
    let builds = 0;
    let release = (): void => {};
    const held = new Promise<void>((resolve) => { release = resolve; });
    const router = new Router().add('GET', '/items/:id', lazyRoute(async () => {
      builds += 1;
      await held;
      return async (context) => sendJson(context, 200, { id: context.params.id });
    }));
    const origin = await serve(router);
    // Paths and methods the table does not serve are answered without loading the route.
    const wrongMethod = await fetch(`${origin}/items/a`, { method: 'POST' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect((await fetch(`${origin}/items`)).status).toBe(404);
    expect((await fetch(`${origin}/items/%E0%A4%A`)).status).toBe(400);
    expect(builds).toBe(0);
    const answers = Promise.all([fetch(`${origin}/items/a`), fetch(`${origin}/items/b%20c`)]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const [a, bc] = await answers;
    expect(await a?.json()).toEqual({ id: 'a' });
    expect(await bc?.json()).toEqual({ id: 'b c' });
    expect(builds).toBe(1);
    expect((await fetch(`${origin}/items/a`, { method: 'POST' })).status).toBe(405);
    expect(await (await fetch(`${origin}/items/z`)).json()).toEqual({ id: 'z' });
    expect(builds).toBe(1);
  });

  it('tries a failed build again at the next request', async () => {
    let builds = 0;
    const router = new Router().add('GET', '/ok', lazyRoute(async () => {
      builds += 1;
      if (builds === 1) throw new Error('module failed to load');
      return async (context) => sendJson(context, 200, { ok: true });
    }));
    const origin = await serve(router);
    expect((await fetch(`${origin}/ok`)).status).toBe(500);
    expect(await (await fetch(`${origin}/ok`)).json()).toEqual({ ok: true });
    expect(builds).toBe(2);
  });
});
