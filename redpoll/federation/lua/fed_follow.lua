-- fed_follow: a remote account follows (or, with ARGV[4] = '0', stops
-- following) a local one: its follow, the count of followers behind its
-- inbox and the local account's follower count change together, and only
-- once (a Follow or Undo delivered again changes nothing).
-- KEYS[1]: fed:fers:{uid}     remote followers of the local account
-- KEYS[2]: fed:inboxes:{uid}  inbox -> followers behind it
-- KEYS[3]: u:{uid}            the local account (its followers count)
-- KEYS[4]: fed:ferin:{uid}    remote follower -> the inbox it was counted under
-- ARGV[1]: the remote account's id   ARGV[2]: its inbox (shared if it has one)
-- ARGV[3]: now (µs; scores are unique and increasing, as a local follow's:
--          the followers' list pages on them)   ARGV[4]: '1' follow, '0' unfollow
-- returns: 1 if it changed anything, 0 if not, -1 if the local account is gone
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
if ARGV[4] == '1' then
  if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
  local score = tonumber(ARGV[3])
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if last[2] and tonumber(last[2]) >= score then score = tonumber(last[2]) + 1 end
  redis.call('ZADD', KEYS[1], score, ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
  redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
  redis.call('HINCRBY', KEYS[3], 'followers', 1)
  return 1
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
local inbox = redis.call('HGET', KEYS[4], ARGV[1]) or ARGV[2]
redis.call('HDEL', KEYS[4], ARGV[1])
if redis.call('HINCRBY', KEYS[2], inbox, -1) <= 0 then redis.call('HDEL', KEYS[2], inbox) end
redis.call('HINCRBY', KEYS[3], 'followers', -1)
return 1
