-- push_drop: remove one token's push subscription if it is still the one
-- with this id (a push service answered that it is gone; a subscription set
-- again since then stays).
-- KEYS[1]: the user's subscriptions hash push:{uid} (token digest -> JSON)
-- ARGV[1]: token digest    ARGV[2]: the subscription's id
-- returns: 1 removed, 0 not there or another one
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
if tostring(cjson.decode(raw)['id']) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
