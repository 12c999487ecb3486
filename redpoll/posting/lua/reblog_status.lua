-- reblog_status: the truth of one boost or unboost, on the original status's
-- slot: who boosted it (with the id of their boost status) and the count,
-- changed together. Versioned by operation id like favourite_status.lua.
-- KEYS[1]: original status hash st:{sid}
-- KEYS[2]: boosters zset rbs:{sid} (uid -> boost status id)
-- KEYS[3]: versions hash rbv:{sid}
-- KEYS[4]: counts hash cnt:{sid}
-- KEYS[5]: undone zset rbv:{sid}:u (uid -> operation id), trimmed to `kept`
--          with their versions, as in favourite_status.lua
-- ARGV[1]: user id
-- ARGV[2]: operation id
-- ARGV[3]: '1' boost, '0' unboost
-- ARGV[4]: id of the new boost status (when boosting)
-- ARGV[5]: kept
-- returns: {boosted 1/0, version, boost status id or 0, author id, 1 if changed}
--          error 'NOTFOUND' when boosting a missing or deleted status
local uid, op = ARGV[1], tonumber(ARGV[2])
local author = redis.call('HGET', KEYS[1], 'uid')
local gone = (not author) or redis.call('HEXISTS', KEYS[1], 'deleted') == 1
local last = tonumber(redis.call('HGET', KEYS[3], uid) or '0')
local changed = 0
if op >= last then
  if ARGV[3] == '1' then
    if gone then return redis.error_reply('NOTFOUND') end
    if redis.call('ZADD', KEYS[2], 'NX', ARGV[4], uid) == 1 then
      redis.call('HINCRBY', KEYS[4], 'r', 1)
      changed = 1
    end
  elseif redis.call('ZREM', KEYS[2], uid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'r', -1)
    changed = 1
  end
  redis.call('HSET', KEYS[3], uid, op)
  last = op
  if ARGV[3] == '1' then
    redis.call('ZREM', KEYS[5], uid)
  else
    redis.call('ZADD', KEYS[5], op, uid)
    local n = redis.call('ZCARD', KEYS[5])
    if n > tonumber(ARGV[5]) then
      for _, old in ipairs(redis.call('ZRANGE', KEYS[5], 0, n - tonumber(ARGV[5]) - 1)) do
        redis.call('HDEL', KEYS[3], old)
      end
      redis.call('ZREMRANGEBYRANK', KEYS[5], 0, n - tonumber(ARGV[5]) - 1)
    end
  end
end
local boost = redis.call('ZSCORE', KEYS[2], uid)
return {boost and 1 or 0, last, boost and tonumber(boost) or 0, tonumber(author or '0'), changed}
