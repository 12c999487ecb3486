-- rule_add: add a server rule with the next id, unless `cap` rules exist
-- (the count, the id and the write in one step: two admins adding at once
-- get two ids, never one).
-- KEYS[1]: the rules hash keys.INSTANCE_RULES (field "seq": the last id;
--          field "r:<id>": the rule's JSON)
-- ARGV[1]: the rule's JSON without its id    ARGV[2]: cap
-- returns: the new rule's id; error 'FULL' at the cap
local n = redis.call('HLEN', KEYS[1])
if redis.call('HEXISTS', KEYS[1], 'seq') == 1 then n = n - 1 end
if n >= tonumber(ARGV[2]) then return redis.error_reply('FULL rules') end
local id = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('HSET', KEYS[1], 'r:' .. id, ARGV[1])
return id
