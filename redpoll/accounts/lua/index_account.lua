-- index_account: make the account search index hold exactly the given terms
-- for one user, unless it holds terms of that revision of the user record or
-- a newer one already (so late or racing calls never bring back old names).
-- KEYS[1]: search:{accounts}      zset of "<term>\0<uid>", all scored 0
-- KEYS[2]: search:{accounts}:of   hash uid -> "<rev>\n<term>\n<term>..."
-- ARGV[1]: user id
-- ARGV[2]: revision ('rev' of the user record the terms were read with)
-- ARGV[3..]: the terms (login, display name, its words), case-folded
-- returns: 1 if the index changed, 0 if it already held this or a newer rev
local uid, rev = ARGV[1], tonumber(ARGV[2])
local held = redis.call('HGET', KEYS[2], uid)
if held then
  local sep = string.find(held, '\n', 1, true) or (#held + 1)
  if tonumber(string.sub(held, 1, sep - 1)) >= rev then return 0 end
  for term in string.gmatch(string.sub(held, sep + 1), '[^\n]+') do
    redis.call('ZREM', KEYS[1], term .. '\0' .. uid)
  end
end
local record = {ARGV[2]}
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], 0, ARGV[i] .. '\0' .. uid)
  record[#record + 1] = ARGV[i]
end
redis.call('HSET', KEYS[2], uid, table.concat(record, '\n'))
return 1
