-- reply_link: record (or, on delete, forget) a reply among its parent's
-- replies and keep the parent's reply count equal to that set's size.
-- Idempotent: linking twice counts once.
-- KEYS[1]: the parent's replies zset rep:{parent} (reply id -> reply id)
-- KEYS[2]: the parent's counts hash cnt:{parent}
-- ARGV[1]: reply id
-- ARGV[2]: '1' link, '0' unlink
-- returns: 1 if changed, else 0
if ARGV[2] == '1' then
  if redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[1]) == 0 then return 0 end
  redis.call('HINCRBY', KEYS[2], 'p', 1)
  return 1
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'p', -1)
return 1
