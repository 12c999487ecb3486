-- bookmark: add a status to the user's bookmarks unless they hold `cap`
-- already (the check and the add in one step: racing bookmarks never pass
-- the bound). Bookmarking one bookmarked already is a no-op.
-- KEYS[1]: the user's bookmarks zset bm:{uid} (sid -> bookmark id)
-- ARGV[1]: status id    ARGV[2]: bookmark id    ARGV[3]: cap
-- returns: 1 added, 0 bookmarked already; error 'FULL' at the cap
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return redis.error_reply('FULL bookmarks')
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
