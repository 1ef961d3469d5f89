/**
 * The Redis backend's scripts. Counters are plain integers, one key per rule and window; concurrency is a sorted set
 * of lease ids scored by their expiry (Redis server time, so instances need not agree on their clocks for leases).
 */

/**
 * KEYS: the lease set of each concurrency slot, then the counter of each rule's current window. ARGV: slot count,
 * lease TTL ms, lease id, each slot's limit, then per rule `limit, cost, ttlMs`.
 * Slots first: only unexpired leases count (an expired one's holder stopped renewing: it crashed; RENEW removes
 * them) and a full slot refuses the request before any window is touched. Then all or nothing: every cost is
 * charged, and taken back again unless every rule with a positive cost stayed within its limit; admitted, the lease
 * joins every slot. A window's expiry is set when its counter is created. Returns `[n]` when slot n is full,
 * otherwise `[0, used before this request of rule 1, rule 2, …, leases held before this request in slot 1, slot 2, …]`.
 * Every instance shares the one Redis, so the script charges without reading first (refusals are the rare case)
 * and makes as few commands as it can.
 */
export const ADMIT = `
local slots = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local now = 0
local held = {}
if slots > 0 then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  for index = 1, slots do
    held[index] = redis.call('ZCOUNT', KEYS[index], string.format('(%d', now), '+inf')
    if held[index] >= tonumber(ARGV[3 + index]) then return {index} end
  end
end
local reply = {0}
local admitted = true
for index = slots + 1, #KEYS do
  local base = 3 + slots + (index - slots - 1) * 3
  local cost = tonumber(ARGV[base + 2])
  local used
  if cost > 0 then
    used = redis.call('INCRBY', KEYS[index], ARGV[base + 2])
    if used == cost then redis.call('PEXPIRE', KEYS[index], ARGV[base + 3]) end
    if used > tonumber(ARGV[base + 1]) then admitted = false end
    used = used - cost
  else
    used = tonumber(redis.call('GET', KEYS[index]) or '0')
  end
  reply[#reply + 1] = used
end
if not admitted then
  for index = slots + 1, #KEYS do
    local cost = ARGV[3 + slots + (index - slots - 1) * 3 + 2]
    if tonumber(cost) > 0 then redis.call('DECRBY', KEYS[index], cost) end
  end
  return reply
end
for index = 1, slots do
  redis.call('ZADD', KEYS[index], now + ttl, ARGV[3])
  redis.call('PEXPIRE', KEYS[index], ttl * 2)
end
for index = 1, slots do reply[#reply + 1] = held[index] end
return reply
`;

/**
 * KEYS: window counters to correct, then lease sets to leave. ARGV[1]: the number of counters; ARGV[n + 1]: the
 * signed correction of counter KEYS[n], or the lease id to remove from lease set KEYS[n]. A window that is gone
 * (expired) is left alone; a counter never goes below 0.
 */
export const SETTLE = `
local counters = tonumber(ARGV[1])
for index = 1, counters do
  if redis.call('EXISTS', KEYS[index]) == 1 then
    local value = redis.call('INCRBY', KEYS[index], ARGV[index + 1])
    if value < 0 then redis.call('SET', KEYS[index], '0', 'KEEPTTL') end
  end
end
for index = counters + 1, #KEYS do
  redis.call('ZREM', KEYS[index], ARGV[index + 1])
end
return #KEYS
`;

/**
 * KEYS: lease sets; ARGV[1]: lease TTL ms; ARGV[n + 1]: the lease id held in KEYS[n]. Pushes each expiry out by a
 * TTL, and drops the leases that expired (ADMIT only leaves them uncounted).
 */
export const RENEW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[1])
for index = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[index], '-inf', now)
  redis.call('ZADD', KEYS[index], now + ttl, ARGV[index + 1])
  redis.call('PEXPIRE', KEYS[index], ttl * 2)
end
return #KEYS
`;
