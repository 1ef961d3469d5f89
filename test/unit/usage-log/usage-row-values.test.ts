/**
 * SQLite binds a usage row's values by position: the list read field by field must name every column, in the order
 * of the insert's column list, with an absent value bound as null.
 */
import { describe, expect, it } from 'vitest';
import { USAGE_COLUMN_NAMES, usageRowValues } from '../../../src/storage/repositories/usage-log-repository.js';

describe('usage row values', () => {
  it('lists every column in the insert order', () => {
    const row = Object.fromEntries(USAGE_COLUMN_NAMES.map((name) => [name, `value of ${name}`]));
    expect(usageRowValues(row as never)).toEqual(USAGE_COLUMN_NAMES.map((name) => `value of ${name}`));
  });

  it('binds an absent value as null', () => {
    const row = { request_id: 'req_1', protocol: 'openai-chat', endpoint: '/v1/chat/completions' };
    const values = usageRowValues(row as never);
    expect(values).toHaveLength(USAGE_COLUMN_NAMES.length);
    expect(values.filter((value) => value !== null)).toEqual(['req_1', 'openai-chat', '/v1/chat/completions']);
  });
});
