import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

describe('instance id', () => {
  it('takes INSTANCE_ID, but not one shaped like a batch\'s hold (those outlive every instance)', () => {
    expect(loadConfig({ INSTANCE_ID: 'gateway-1' }, '/tmp').instanceId).toBe('gateway-1');
    expect(() => loadConfig({ INSTANCE_ID: 'batch:abc' }, '/tmp')).toThrow(ConfigError);
  });
});
