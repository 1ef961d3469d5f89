import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

describe('response cache lookup timeout', () => {
  it('is 250 ms unless RESPONSE_CACHE_LOOKUP_TIMEOUT_MS sets 1 to 60000 ms', () => {
    expect(loadConfig({}, '/tmp').responseCacheLookupTimeoutMs).toBe(250);
    expect(loadConfig({ RESPONSE_CACHE_LOOKUP_TIMEOUT_MS: '2000' }, '/tmp').responseCacheLookupTimeoutMs).toBe(2000);
    expect(loadConfig({ UNIGATE_RESPONSE_CACHE_LOOKUP_TIMEOUT_MS: '40' }, '/tmp').responseCacheLookupTimeoutMs).toBe(40);
    for (const wrong of ['0', '60001', '1.5', 'soon']) expect(() => loadConfig({ RESPONSE_CACHE_LOOKUP_TIMEOUT_MS: wrong }, '/tmp')).toThrow(ConfigError);
  });
});
