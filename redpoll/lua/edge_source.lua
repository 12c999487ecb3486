-- edge_source: set the owner's side of a follow (following:{a} has b) or of a
-- list membership (list members has m), with the owner's counter. This side
-- is authoritative; edge_target copies its state to the other user's slot.
-- KEYS[1]: source zset (following:{a} / list members)
-- KEYS[2]: owner hash that must exist with field ARGV[3] (u:{a} / lists:{a})
-- KEYS[3]: the owner's timeline (home:{a} / list timeline)
-- ARGV[1]: member
-- ARGV[2]: '1' to add, '0' to remove
-- ARGV[3]: field of KEYS[2] that proves the owner exists
-- ARGV[4]: counter field in KEYS[2] ('' for none)
-- ARGV[5]: now in microseconds
-- ARGV[6]: maximum size of the set (0 = unbounded)
-- returns: {changed (0/1), oldest id in the timeline or ''}, or an error reply
--          'NOOWNER' / 'FULL'
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then
  return redis.error_reply('NOOWNER')
end
local changed = 0
if ARGV[2] == '1' then
  if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    local max = tonumber(ARGV[6])
    if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then
      return redis.error_reply('FULL')
    end
    -- scores are unique and increasing so they work as a paging cursor
    local score = tonumber(ARGV[5])
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) >= score then score = tonumber(last[2]) + 1 end
    redis.call('ZADD', KEYS[1], score, ARGV[1])
    changed = 1
  end
else
  changed = redis.call('ZREM', KEYS[1], ARGV[1])
end
if changed == 1 and ARGV[4] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[4], ARGV[2] == '1' and 1 or -1)
end
local tail = redis.call('LINDEX', KEYS[3], -1) or ''
return {changed, tail}
