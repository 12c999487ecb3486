-- trend_mark: set one candidate's score in a day's candidates of a trend
-- (trend:{trends}:<kind>:<day>), keep the most scored ARGV[3] of them and
-- let the day expire. Setting a score again is a no-op (idempotent); a
-- score of 0 or less takes the candidate out.
-- KEYS[1]: the day's candidates (zset)
-- ARGV[1]: member    ARGV[2]: score    ARGV[3]: candidates kept at most
-- ARGV[4]: seconds to keep the day
-- ARGV[5]: '1': only raise the score (ZADD GT), '0': set it
-- returns: 1
if tonumber(ARGV[2]) <= 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
if ARGV[5] == '1' then
  redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
