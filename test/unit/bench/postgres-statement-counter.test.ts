import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { FrontendMessageReader, startStatementCounter } from '../../../bench/postgres-statement-counter.js';
import { createThrowawayPostgresDatabase, isPostgresUrl } from '../../support/postgres-test-database.js';

/** A typed frontend message: its type byte, then its length (itself included) and the payload. */
function message(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(4 + payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** An untyped packet (startup, SSLRequest): length then a 32-bit code, then the rest. */
function untyped(code: number, rest: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + rest.length, 0);
  head.writeInt32BE(code, 4);
  return Buffer.concat([head, rest]);
}

const SSL_REQUEST = 80877103;
const PROTOCOL_3 = 196608;

/** What node-postgres sends for one extended-protocol query, and one simple query. */
const conversation = Buffer.concat([
  untyped(SSL_REQUEST),
  untyped(PROTOCOL_3, Buffer.from('user\0postgres\0database\0x\0\0', 'latin1')),
  message('p', Buffer.from('password\0')),
  message('P', Buffer.from('\0select $1\0\0\0')),
  message('B', Buffer.from('\0\0\0\0\0\0\0\0')),
  message('D', Buffer.from('P\0')),
  message('E', Buffer.from('\0\0\0\0\0')),
  message('S', Buffer.alloc(0)),
  message('Q', Buffer.from('begin; select 1; commit\0')),
  message('X', Buffer.alloc(0)),
]);

describe('counting PostgreSQL statements on the wire', () => {
  it('counts Execute and Query messages, skipping the untyped startup packets', () => {
    let count = 0;
    new FrontendMessageReader(() => (count += 1)).push(conversation);
    expect(count).toBe(2);
  });

  it('counts the same however the stream is cut into chunks', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: conversation.length }), { maxLength: 20 }), (cuts) => {
      let count = 0;
      const reader = new FrontendMessageReader(() => (count += 1));
      const points = [...new Set(cuts)].sort((a, b) => a - b);
      let at = 0;
      for (const point of [...points, conversation.length]) {
        reader.push(conversation.subarray(at, point));
        at = point;
      }
      return count === 2;
    }));
  });

  const adminUrl = process.env.TEST_DATABASE_URL;
  it.skipIf(!isPostgresUrl(adminUrl))('counts what a real client runs through the relay', async () => {
    const database = await createThrowawayPostgresDatabase(adminUrl);
    const counter = await startStatementCounter(database.url);
    const client = new pg.Client({ connectionString: counter.url });
    try {
      await client.connect();
      const before = counter.statements();
      await client.query('select 1');
      await client.query('select $1::int as n', [2]);
      await client.query({ text: 'select $1::int as n', values: [3], name: 'prepared-n' });
      expect((await client.query({ text: 'select $1::int as n', values: [4], name: 'prepared-n' })).rows).toEqual([{ n: 4 }]);
      expect(counter.statements() - before).toBe(4);
    } finally {
      await client.end().catch(() => undefined);
      await counter.close();
      await database.drop();
    }
  });
});
