-- pin: add a status to its author's pins unless they hold `cap` already
-- (the check and the add in one step: racing pins never pass the bound).
-- Pinning one pinned already is a no-op.
-- KEYS[1]: the author's pins zset pins:{uid} (sid -> pin time, ms)
-- ARGV[1]: status id    ARGV[2]: pin time    ARGV[3]: cap
-- returns: 1 pinned, 0 pinned already; error 'FULL' at the cap
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return redis.error_reply('FULL pins')
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
