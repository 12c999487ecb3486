-- collection_item: add, remove or revoke one item of a collection.
-- KEYS[1]: the owner's collections zset    KEYS[2]: the record hash
-- KEYS[3]: the items hash (item id -> '<account>|<state>|<ms>')
-- KEYS[4]: the item accounts hash (account id -> item id)
-- ARGV[1]: 'add' | 'remove' | 'revoke'    ARGV[2]: collection id
-- ARGV[3]: the item id
-- ARGV[4]: (optional: add and revoke) add: the account id; revoke: the
--   revoking account id
-- ARGV[5]: (optional: add only) now (ms)
-- ARGV[6]: (optional: add only) most pending or accepted items
-- returns: 'OK' (remove and revoke: 'OK <account id>'), 'NONE' (no such
--          collection or item), 'TAKEN' (the account is in it) or 'FULL'
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 'NONE' end
local op = ARGV[1]
if op == 'add' then
  if redis.call('HEXISTS', KEYS[4], ARGV[4]) == 1 then return 'TAKEN' end
  local live = 0
  for _, v in ipairs(redis.call('HVALS', KEYS[3])) do
    local state = string.match(v, '^[^|]*|([^|]*)|')
    if state == 'accepted' or state == 'pending' then live = live + 1 end
  end
  if live >= tonumber(ARGV[6]) then return 'FULL' end
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4] .. '|accepted|' .. ARGV[5])
  redis.call('HSET', KEYS[4], ARGV[4], ARGV[3])
  redis.call('HSET', KEYS[2], 'ua', ARGV[5])
  return 'OK'
end
local item = redis.call('HGET', KEYS[3], ARGV[3])
if not item then return 'NONE' end
local account, state, at = string.match(item, '^([^|]*)|([^|]*)|(.*)$')
if op == 'remove' then
  redis.call('HDEL', KEYS[3], ARGV[3])
  redis.call('HDEL', KEYS[4], account)
  return 'OK ' .. account
end
if account ~= ARGV[4] then return 'NONE' end
if state ~= 'revoked' then
  redis.call('HSET', KEYS[3], ARGV[3], account .. '|revoked|' .. at)
end
return 'OK ' .. account
