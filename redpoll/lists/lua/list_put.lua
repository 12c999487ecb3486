-- list_put: create or rename one of a user's lists.
-- KEYS[1]: lists:{owner} hash, list id -> title
-- ARGV[1]: list id
-- ARGV[2]: title
-- ARGV[3]: 'create' (bounded by ARGV[4] lists per user) or 'rename'
-- ARGV[4]: most lists a user may own
-- returns: 1, or error 'NOLIST' (rename of an unknown list) / 'FULL'
local exists = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if ARGV[3] == 'rename' and not exists then return redis.error_reply('NOLIST') end
if ARGV[3] == 'create' and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.error_reply('FULL')
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
