-- notification_dismiss: remove one notification of a user, id and record
-- together (its index entry stays, see notify.lua).
-- KEYS[1]: notification ids zset nt:{uid}
-- KEYS[2]: records hash ntr:{uid}
-- ARGV[1]: notification id
-- returns: 1 removed, 0 unknown
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
