/**
 * An idle gateway on PostgreSQL with Redis costs the database almost nothing: its background loops (batches,
 * provider batches, webhooks, alerts, the routing and tier snapshots, the heartbeat and its sweep) back off while
 * they find no work, so over two minutes of idleness it sends at most half a statement a second, counted on the wire
 * by a relay in front of the server. A busy machine only delays timers, which lowers the count.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStatementCounter, type StatementCounter } from '../../../bench/postgres-statement-counter.js';
import { startTestGateway, suiteDatabase, type TestGateway } from '../../support/gateway-harness.js';
import { createThrowawayPostgresDatabase, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { RedisFixture, TEST_REDIS_URL } from '../../unit/limits/redis-test-support.js';

/** The idle budget. */
const MAX_STATEMENTS_PER_SECOND = 0.5;
/**
 * Long enough for the loops' waits to have grown to their maximum (batches and webhooks: 1 s doubling to 60 s), and
 * placed so the window falls between two of the alert checks still backing off (30 s doubling: at 0, 60, 180 and
 * 420 s), whose dozen statements belong to the ramp, not to the idle rate (one every ten minutes).
 */
const SETTLE_MS = 200_000;
const WINDOW_MS = 120_000;

describe.skipIf(suiteDatabase() !== 'postgres' || TEST_REDIS_URL === undefined)('an idle gateway on PostgreSQL and Redis', () => {
  let database: ThrowawayPostgresDatabase;
  let counter: StatementCounter;
  let gateway: TestGateway;
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', `unigate-test:idle-${randomBytes(6).toString('hex')}:`);

  beforeAll(async () => {
    database = await createThrowawayPostgresDatabase();
    counter = await startStatementCounter(database.url);
    gateway = await startTestGateway({ env: { DATABASE_URL: counter.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix } });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await counter?.close();
    await database?.drop();
    await redis.cleanUp();
  });

  it(`sends at most ${MAX_STATEMENTS_PER_SECOND} statements a second once its loops have backed off`, async () => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const before = counter.statements();
    const textsBefore = new Map(counter.texts());
    const startedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const seconds = (performance.now() - startedAt) / 1000;
    const sent = counter.statements() - before;
    const breakdown = [...counter.texts()]
      .map(([text, count]) => `${count - (textsBefore.get(text) ?? 0)} × ${text.replace(/\s+/g, ' ').slice(0, 100)}`)
      .filter((line) => !line.startsWith('0 ×'));
    console.log(`idle: ${sent} statements in ${seconds.toFixed(1)} s (${(sent / seconds).toFixed(3)}/s)\n${breakdown.join('\n')}`);
    expect(sent / seconds, breakdown.join('\n')).toBeLessThanOrEqual(MAX_STATEMENTS_PER_SECOND);
  }, SETTLE_MS + WINDOW_MS + 60_000);
});
