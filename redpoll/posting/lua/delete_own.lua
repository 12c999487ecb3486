-- delete_own: take a deleted status out of its author's profile and home
-- timelines and uncount it, and remember the id as deleted (KEYS[4]) so that
-- a post journal replayed late cannot record it again (record_post.lua).
-- The decrement happens only when the id actually left the profile, so
-- concurrent or repeated deletes decrement once. Idempotent.
-- KEYS[1]: profile zset prof:{a}
-- KEYS[2]: home list home:{a}
-- KEYS[3]: user hash u:{a}
-- KEYS[4]: lately deleted ids, zset gone:{a}, id -> ms of the delete
-- KEYS[5]: the author's statuses the home rule looks at (keys.ruled_posts),
--          scored by id
-- ARGV[1]: status id
-- ARGV[2]: now in ms
-- ARGV[3]: ms before which entries of KEYS[4] are dropped
-- returns: 1 if this call uncounted the status, else 0
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[3])
redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[5], ARGV[1], ARGV[1])
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[3], 'posts', -1)
redis.call('HINCRBY', KEYS[3], 'rev', 1)  -- the user record changed (users.current)
return 1
