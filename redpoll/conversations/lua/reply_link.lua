-- reply_link: record (or, on delete, forget) a reply among its parent's
-- replies and keep the parent's reply count equal to the number of those
-- that are public or unlisted (Mastodon's replies_count: a followers-only
-- or direct reply must not show that it exists).
-- Idempotent: linking twice counts once; the count is set from the set's
-- size, never added to.
-- KEYS[1]: the parent's replies zset rep:{parent} (reply id -> reply id)
-- KEYS[2]: the parent's counted replies zset rpc:{parent} (public, unlisted)
-- KEYS[3]: the parent's counts hash cnt:{parent}
-- ARGV[1]: reply id
-- ARGV[2]: '1' link, '0' unlink
-- ARGV[3]: '1' if the reply is counted (public or unlisted), else '0'
-- returns: 1 if changed, else 0
local changed
if ARGV[2] == '1' then
  changed = redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[1])
  if ARGV[3] == '1' and redis.call('ZADD', KEYS[2], 'NX', ARGV[1], ARGV[1]) == 1 then
    redis.call('HSET', KEYS[3], 'p', redis.call('ZCARD', KEYS[2]))
  end
  return changed
end
changed = redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[3], 'p', redis.call('ZCARD', KEYS[2]))
end
return changed
