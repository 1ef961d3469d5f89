import { randomBytes } from 'node:crypto';
import { createRedisConnection, type Redis } from '../../../src/redis/redis-connection.js';

/** The machine's Redis for tests (CI sets it); Redis tests are skipped only when it is unset. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

/** A key prefix of its own per test file, so files running in parallel never share counters. */
export function testKeyPrefix(): string {
  return `unigate-test:${randomBytes(6).toString('hex')}:`;
}

/** Opens connections and deletes every key under `prefix` at the end. */
export class RedisFixture {
  readonly connections: Redis[] = [];

  constructor(readonly url: string, readonly prefix: string) {}

  connect(name = 'test'): Redis {
    const connection = createRedisConnection(this.url, name);
    connection.on('error', () => undefined);
    this.connections.push(connection);
    return connection;
  }

  async cleanUp(): Promise<void> {
    const admin = this.connect('cleanup');
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await admin.del(...keys);
    } while (cursor !== '0');
    await Promise.all(this.connections.map((connection) => connection.quit().catch(() => connection.disconnect())));
  }
}
