-- delete_own: take a deleted status out of its author's profile and home
-- timelines and uncount it. The decrement happens only when the id actually
-- left the profile, so concurrent or repeated deletes decrement once.
-- KEYS[1]: profile zset prof:{a}
-- KEYS[2]: home list home:{a}
-- KEYS[3]: user hash u:{a}
-- ARGV[1]: status id
-- returns: 1 if this call uncounted the status, else 0
redis.call('LREM', KEYS[2], 0, ARGV[1])
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[3], 'posts', -1)
redis.call('HINCRBY', KEYS[3], 'rev', 1)  -- the user record changed (users.current)
return 1
