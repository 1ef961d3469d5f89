/**
 * The MCP health checks' schedule: a pass that finds no server to check (none registered, or only disabled ones)
 * loads nothing and records nothing; once a server is registered the next pass checks it; `stop` ends the schedule.
 * The server listens on 127.0.0.1 and never answers, so its check ends at its timeout as unhealthy.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpHealthSchedule } from '../../../src/mcp/mcp-health-schedule.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { McpServer, McpServerHealth, McpServerRepository } from '../../../src/storage/repositories/mcp-server-repository.js';

let silent: Server;
let url: string;

beforeAll(async () => {
  silent = createServer(() => { /* never answers */ });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/mcp`;
});

afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

const waitFor = async (condition: () => boolean, timeoutMs = 20_000): Promise<void> => {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('MCP health schedule', () => {
  it('checks nothing while no enabled server is registered, then checks the one registered', async () => {
    const server: McpServer = {
      id: 'mcp_1', name: 'silent', url, transport: 'streamable-http', headerNames: [], public: true, enabled: true,
      createdAt: 0, updatedAt: 0, callsPerMinute: null, concurrency: null, pricePerCallNano: null, logPayloads: false,
      toolRules: { default: 'allowed', tools: {} }, health: null, oauth: null, stdio: null, ownerAccountId: null,
    };
    let registered: McpServer[] = [{ ...server, id: 'mcp_off', enabled: false }, { ...server, id: 'mcp_account', ownerAccountId: 'acc_1' }];
    let lists = 0;
    const recorded: Array<{ id: string; health: McpServerHealth }> = [];
    const servers = {
      list: () => {
        lists += 1;
        return Promise.resolve(registered);
      },
      headersOf: () => Promise.resolve({}),
      recordHealth: (id: string, health: McpServerHealth) => {
        recorded.push({ id, health });
        return Promise.resolve(true);
      },
    } as Partial<McpServerRepository> as McpServerRepository;
    const schedule = new McpHealthSchedule(
      { servers, clock: { now: () => Date.now() }, logger: silentLogger, outbound: { allowPrivateAddresses: true } },
      { intervalMs: 50, timeoutMs: 300, concurrency: 2 },
    );
    schedule.start();
    try {
      await waitFor(() => lists >= 3);
      expect(recorded, 'a disabled server and an account\'s server (account servers off) are not checked').toEqual([]);
      registered = [...registered, server];
      await waitFor(() => recorded.length > 0);
      expect(recorded[0]).toMatchObject({ id: 'mcp_1', health: { status: 'unhealthy' } });
      expect(recorded.every((entry) => entry.id === 'mcp_1')).toBe(true);
    } finally {
      await schedule.stop();
    }
    const after = lists;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lists, 'no pass after stop').toBe(after);
  });

  it('stops before its first pass', async () => {
    let lists = 0;
    const servers = { list: () => Promise.resolve((lists += 1, [])) } as Partial<McpServerRepository> as McpServerRepository;
    const schedule = new McpHealthSchedule(
      { servers, clock: { now: () => Date.now() }, logger: silentLogger, outbound: { allowPrivateAddresses: true } },
      { intervalMs: 60_000, timeoutMs: 300, concurrency: 2 },
    );
    schedule.start();
    await schedule.stop();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(lists).toBe(0);
  });
});
