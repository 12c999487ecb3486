-- fed_move: a remote account moved (a Move taken): recorded on its record
-- (`moved`: the new account's id; its entity shows that account's record
-- as it is when read, and a new revision makes kept renderings follow) and
-- its actor hash (`moved_to`), once per Move: the first Move of the account
-- claims it for ARGV[3] seconds; the same Move again (its job retried)
-- writes the same again; another Move in that time changes nothing.
-- KEYS[1]: u:{old}   KEYS[2]: fed:actor:{old}   KEYS[3]: fed:move:{old}
-- ARGV[1]: the new account's id   ARGV[2]: the Move's id
-- ARGV[3]: the claim's time to live (s)
-- returns: 1 (recorded: its job is to be queued), 0 (another Move's claim holds)
local claim = ARGV[1] .. ' ' .. ARGV[2]
local had = redis.call('GET', KEYS[3])
if had and had ~= claim then return 0 end
if not had then redis.call('SET', KEYS[3], claim, 'EX', ARGV[3]) end
redis.call('HSET', KEYS[1], 'moved', ARGV[1])
redis.call('HSET', KEYS[2], 'moved_to', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return 1
