-- tag_feature: feature a hashtag on an account's profile, under the cap, once.
-- KEYS[1]: ftags:{uid}   normalized name -> JSON {id, name, at}
-- ARGV[1]: normalized name   ARGV[2]: its JSON   ARGV[3]: the cap
-- returns: 1 featured, 0 featured already, -1 the cap is reached
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
