-- ruled_rename: a user's ruled posts from their old key into their new one
-- (migration 9), merged with what the running code wrote there meanwhile.
-- KEYS[1]: the old key (profdm:{uid})    KEYS[2]: the new key (ruled:{uid})
-- returns: 1 if there was something to move, 0 if not
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZUNIONSTORE', KEYS[2], 2, KEYS[2], KEYS[1], 'AGGREGATE', 'MAX')
redis.call('DEL', KEYS[1])
return 1
