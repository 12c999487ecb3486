-- keep_ranked: set one member's score in a bounded ranking and keep the
-- ARGV[3] highest scored (the most followed accounts; the newest dismissed
-- suggestions). Setting the same score again is a no-op (idempotent); a
-- score of 0 or less takes the member out.
-- KEYS[1]: the ranking (popular:{accounts}, sugdis:{uid})
-- ARGV[1]: member    ARGV[2]: score    ARGV[3]: members kept at most
-- returns: 1
if tonumber(ARGV[2]) <= 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
end
return 1
