-- link_use: use a single-use link once, and make its change to the
-- account's secrets in the same step.
-- KEYS[1]: the account's links hash mlink:{uid}
-- KEYS[2]: its secrets hash sec:{uid}
-- ARGV[1]: the link's field (confirm, reset)
-- ARGV[2]: the field's value as the caller checked it (digest, expiry, address)
-- ARGV[3]: number N of secrets field/value pairs to set, then 2N of them
-- ARGV[4+2N ..]: secrets fields to delete
-- returns: 1, or 0 (nothing written) if the link was used or replaced meanwhile
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
if ARGV[1] == 'confirm' then redis.call('HDEL', KEYS[1], 'pending') end
local n = tonumber(ARGV[3])
if n > 0 then redis.call('HSET', KEYS[2], unpack(ARGV, 4, 3 + 2 * n)) end
for i = 4 + 2 * n, #ARGV do redis.call('HDEL', KEYS[2], ARGV[i]) end
return 1
