/**
 * The Redis backend's scripts. Counters are plain integers, one key per rule and window; concurrency is a sorted set
 * of lease ids scored by their expiry (Redis server time, so instances need not agree on their clocks for leases).
 */

/**
 * KEYS: the counter of each rule's current window. ARGV: per rule `limit, cost, ttlMs`.
 * All or nothing: nothing is charged unless every rule with a positive cost has room. Returns
 * `[admitted (1|0), used before this request of rule 1, rule 2, …]`.
 */
export const CONSUME = `
local used = {}
local admitted = 1
for index = 1, #KEYS do
  local value = tonumber(redis.call('GET', KEYS[index]) or '0')
  used[index] = value
  local base = (index - 1) * 3
  local cost = tonumber(ARGV[base + 2])
  if cost > 0 and value + cost > tonumber(ARGV[base + 1]) then admitted = 0 end
end
if admitted == 1 then
  for index = 1, #KEYS do
    local base = (index - 1) * 3
    if tonumber(ARGV[base + 2]) > 0 then
      redis.call('INCRBY', KEYS[index], ARGV[base + 2])
      redis.call('PEXPIRE', KEYS[index], ARGV[base + 3])
    end
  end
end
table.insert(used, 1, admitted)
return used
`;

/** KEYS[1]: a window counter. ARGV[1]: signed correction. A window that is gone (expired) is left alone; never below 0. */
export const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value < 0 then redis.call('SET', KEYS[1], '0', 'KEEPTTL') end
return 1
`;

/**
 * KEYS[1]: the lease set of one concurrency dimension. ARGV: limit, lease id, lease TTL ms.
 * Drops expired leases (their holder stopped renewing: it crashed), then adds this one if a slot is free.
 */
export const ACQUIRE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return 1
`;

/** KEYS: lease sets; ARGV[1]: lease TTL ms; ARGV[n + 1]: the lease id held in KEYS[n]. Pushes each expiry out by a TTL. */
export const RENEW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[1])
for index = 1, #KEYS do
  redis.call('ZADD', KEYS[index], now + ttl, ARGV[index + 1])
  redis.call('PEXPIRE', KEYS[index], ttl * 2)
end
return #KEYS
`;
