-- push_subscribe: set the push subscription of one access token, replacing
-- the one it had (as Mastodon: a new id), unless the user holds `cap`
-- subscriptions of other tokens already (the check and the write in one step).
-- KEYS[1]: the user's subscriptions hash push:{uid} (token digest -> JSON)
-- KEYS[2]: the user's subscription id counter pushseq:{uid}
-- ARGV[1]: token digest
-- ARGV[2]: the record JSON, an object without its id (spliced in here)
-- ARGV[3]: cap
-- returns: {id, record as stored}; error 'FULL' at the cap
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0
   and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return redis.error_reply('FULL push subscriptions')
end
local id = redis.call('INCR', KEYS[2])
local record = '{"id":' .. id .. ',' .. string.sub(ARGV[2], 2)
redis.call('HSET', KEYS[1], ARGV[1], record)
return {id, record}
