-- favourite_status: the truth of one favourite or unfavourite, on the
-- status's slot: who favourited it and the count, changed together, so the
-- count is always the size of the set (a repeat changes nothing).
-- Operations on one (user, status) pair carry increasing ids (keys.
-- INTERACTION_SEQ); one older than the last applied is stale and changes
-- nothing (a journal replayed late must not undo a newer choice). The reply
-- is the pair's state after the call, which the caller copies into the
-- user's own index and the author's notifications (each versioned the same).
-- KEYS[1]: status hash st:{sid}
-- KEYS[2]: favourited-by zset favs:{sid} (uid -> favourite id)
-- KEYS[3]: versions hash favv:{sid} (uid -> last operation id)
-- KEYS[4]: counts hash cnt:{sid}
-- KEYS[5]: undone zset favv:{sid}:u (uid -> operation id): the users whose
--          last operation was an unfavourite; past `kept` of them the oldest
--          go, with their version (a replay that late is no longer possible
--          in practice: journals are replayed within minutes)
-- ARGV[1]: user id
-- ARGV[2]: operation id
-- ARGV[3]: '1' favourite, '0' unfavourite
-- ARGV[4]: kept
-- returns: {favourited 1/0, version of that state, favourite id or 0, author id,
--           1 if this call changed the set else 0};
--          error 'NOTFOUND' when favouriting a missing or deleted status
local uid, op = ARGV[1], tonumber(ARGV[2])
local author = redis.call('HGET', KEYS[1], 'uid')
local gone = (not author) or redis.call('HEXISTS', KEYS[1], 'deleted') == 1
local last = tonumber(redis.call('HGET', KEYS[3], uid) or '0')
local changed = 0
if op >= last then
  if ARGV[3] == '1' then
    if gone then return redis.error_reply('NOTFOUND') end
    if redis.call('ZADD', KEYS[2], 'NX', op, uid) == 1 then
      redis.call('HINCRBY', KEYS[4], 'f', 1)
      changed = 1
    end
  elseif redis.call('ZREM', KEYS[2], uid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'f', -1)
    changed = 1
  end
  redis.call('HSET', KEYS[3], uid, op)
  last = op
  if ARGV[3] == '1' then
    redis.call('ZREM', KEYS[5], uid)
  else
    redis.call('ZADD', KEYS[5], op, uid)
    local n = redis.call('ZCARD', KEYS[5])
    if n > tonumber(ARGV[4]) then
      for _, old in ipairs(redis.call('ZRANGE', KEYS[5], 0, n - tonumber(ARGV[4]) - 1)) do
        redis.call('HDEL', KEYS[3], old)
      end
      redis.call('ZREMRANGEBYRANK', KEYS[5], 0, n - tonumber(ARGV[4]) - 1)
    end
  end
end
local score = redis.call('ZSCORE', KEYS[2], uid)
return {score and 1 or 0, last, score and tonumber(score) or 0, tonumber(author or '0'), changed}
