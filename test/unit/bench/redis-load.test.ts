import { describe, expect, it } from 'vitest';
import { parseRedisLoad } from '../../../bench/postgres-redis.js';
import { redisPerResponse } from '../../../bench/measure.js';

/** What Redis 7 answers to `INFO cpu commandstats` (lines end in CRLF). */
const INFO = [
  '# CPU',
  'used_cpu_sys:2.250000',
  'used_cpu_user:5.750000',
  'used_cpu_sys_children:0.000000',
  '',
  '# Commandstats',
  'cmdstat_evalsha:calls=1000,usec=40000,usec_per_call=40.00,rejected_calls=0,failed_calls=0',
  'cmdstat_incrby:calls=4000,usec=4000,usec_per_call=1.00,rejected_calls=0,failed_calls=0',
  'cmdstat_config|resetstat:calls=1,usec=201,usec_per_call=201.00,rejected_calls=0,failed_calls=0',
  '',
].join('\r\n');

describe('Redis load of a bench run', () => {
  it('reads CPU time and every command run, those inside scripts and subcommands included', () => {
    expect(parseRedisLoad(INFO)).toEqual({ cpuSeconds: 8, commands: 5001 });
    expect(parseRedisLoad('# Server\r\nredis_version:7.0.15\r\n')).toBeNull();
  });

  it('gives CPU and commands per response, without the first reading\'s own INFO', () => {
    const figures = redisPerResponse({ cpuSeconds: 8, commands: 5001 }, { cpuSeconds: 8.5, commands: 25_002 }, 2000);
    expect(figures.redisCpuMicrosPerRequest).toBeCloseTo(250, 6);
    expect(figures.redisCommandsPerRequest).toBe(10);
    expect(redisPerResponse(null, { cpuSeconds: 1, commands: 1 }, 10)).toEqual({});
    expect(redisPerResponse({ cpuSeconds: 1, commands: 1 }, { cpuSeconds: 2, commands: 2 }, 0)).toEqual({});
  });
});
