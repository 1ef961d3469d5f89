/** Per-IP rules: the public endpoints' budget and the console's anti-bruteforce rules (used by the console's routes). */
import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import { CONSOLE_AUTH_LIMITS, consoleAuthRule, publicEndpointRule } from '../../../src/limits/ip-rules.js';
import { T0 } from './rate-limiter-contract.js';

describe('IP rules', () => {
  it('give the public endpoints one per-minute budget per IP', () => {
    expect(publicEndpointRule('203.0.113.7', 60)).toEqual({ id: 'ip:203.0.113.7:public', dimension: 'ip-public', limit: 60, windowMs: 60_000 });
    expect(publicEndpointRule('2001:db8::1', 5).id).toBe('ip:2001:db8::1:public');
  });

  it('give each console credential action its own budget per IP, apart from the public one', async () => {
    const limiter = new InMemoryRateLimiter();
    const ip = '198.51.100.4';
    for (let attempt = 0; attempt < CONSOLE_AUTH_LIMITS['sign-in'].limit; attempt += 1) {
      expect((await limiter.consume([{ rule: consoleAuthRule('sign-in', ip), cost: 1 }], T0 + attempt)).allowed).toBe(true);
    }
    const refused = await limiter.consume([{ rule: consoleAuthRule('sign-in', ip), cost: 1 }], T0 + 20_000);
    expect(refused.allowed ? null : refused.retryAfterMs).toBe(40_000);
    expect((await limiter.consume([{ rule: consoleAuthRule('sign-in', '198.51.100.5'), cost: 1 }], T0)).allowed).toBe(true);
    expect((await limiter.consume([{ rule: consoleAuthRule('password-reset', ip), cost: 1 }], T0)).allowed).toBe(true);
    expect((await limiter.consume([{ rule: publicEndpointRule(ip, 60), cost: 1 }], T0)).allowed).toBe(true);
  });

  it('limit sign-up and password reset per hour', () => {
    expect(consoleAuthRule('sign-up', '192.0.2.1')).toMatchObject({ dimension: 'ip-console-sign-up', limit: 5, windowMs: 3_600_000 });
    expect(consoleAuthRule('password-reset', '192.0.2.1')).toMatchObject({ dimension: 'ip-console-password-reset', limit: 5, windowMs: 3_600_000 });
    expect(consoleAuthRule('sign-in', '192.0.2.1')).toMatchObject({ limit: 10, windowMs: 60_000 });
  });
});
