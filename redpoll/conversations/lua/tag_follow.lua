-- tag_follow: add a hashtag to the user's followed tags unless they follow
-- `cap` already: the check and the add in one step, so racing follows never
-- pass the bound. Following one followed already is a no-op.
-- KEYS[1]: the user's followed tags zset ftags:{uid} (name -> time followed)
-- ARGV[1]: tag name    ARGV[2]: time (µs)    ARGV[3]: cap
-- returns: 1 added, 0 followed already; error 'FULL' at the cap
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return redis.error_reply('FULL followed hashtags')
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
