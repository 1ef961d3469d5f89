/**
 * The Redis backend's scripts. Counters are plain integers, one key per rule and window; concurrency is a sorted set
 * of lease ids scored by their expiry (Redis server time, so instances need not agree on their clocks for leases).
 */

/**
 * The admissions of one event-loop turn, in order, each as if it ran alone: every instance shares the one Redis, and
 * a script call costs it more than the commands the call runs, so a turn's admissions are one call. ARGV[1]: lease
 * TTL ms, ARGV[2]: the number of admissions; then per admission `slot count, rule count, lease id`, each slot's
 * limit, then per rule `limit, cost, ttlMs`. KEYS: per admission, the lease set of each of its slots, then the
 * counter of each of its rules' current windows.
 * Per admission, slots first: only unexpired leases count (an expired one's holder stopped renewing: it crashed;
 * RENEW removes them) and a full slot refuses the request before any window is touched. Then all or nothing: every
 * cost is charged, and taken back again unless every rule with a positive cost stayed within its limit (refusals
 * are the rare case, so windows are not read first); admitted, the lease joins every slot. A window's expiry is set
 * when its counter is created. Returns one reply per admission: `{n}` when slot n is full, otherwise
 * `{0, used before this request of rule 1, rule 2, …, leases held before this request in slot 1, slot 2, …}`.
 */
export const ADMIT = `
local ttl = tonumber(ARGV[1])
local now = nil

local function admit(slotKeys, slots, ruleKeys, rules, limitsAt, rulesAt, lease)
  local held = {}
  if slots > 0 and now == nil then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  for index = 1, slots do
    held[index] = redis.call('ZCOUNT', KEYS[slotKeys + index], string.format('(%d', now), '+inf')
    if held[index] >= tonumber(ARGV[limitsAt + index]) then return {index} end
  end
  local reply = {0}
  local admitted = true
  for index = 1, rules do
    local base = rulesAt + (index - 1) * 3
    local key = KEYS[ruleKeys + index]
    local cost = tonumber(ARGV[base + 2])
    local used
    if cost > 0 then
      used = redis.call('INCRBY', key, ARGV[base + 2])
      if used == cost then redis.call('PEXPIRE', key, ARGV[base + 3]) end
      if used > tonumber(ARGV[base + 1]) then admitted = false end
      used = used - cost
    else
      used = tonumber(redis.call('GET', key) or '0')
    end
    reply[index + 1] = used
  end
  if not admitted then
    for index = 1, rules do
      local cost = ARGV[rulesAt + (index - 1) * 3 + 2]
      if tonumber(cost) > 0 then redis.call('DECRBY', KEYS[ruleKeys + index], cost) end
    end
    return reply
  end
  for index = 1, slots do
    redis.call('ZADD', KEYS[slotKeys + index], now + ttl, lease)
    redis.call('PEXPIRE', KEYS[slotKeys + index], ttl * 2)
    reply[rules + 1 + index] = held[index]
  end
  return reply
end

local replies = {}
local key = 0
local arg = 2
for ask = 1, tonumber(ARGV[2]) do
  local slots = tonumber(ARGV[arg + 1])
  local rules = tonumber(ARGV[arg + 2])
  local lease = ARGV[arg + 3]
  local limitsAt = arg + 3
  local rulesAt = limitsAt + slots
  replies[ask] = admit(key, slots, key + slots, rules, limitsAt, rulesAt, lease)
  key = key + slots + rules
  arg = rulesAt + rules * 3
end
return replies
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
