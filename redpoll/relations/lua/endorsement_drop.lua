-- endorsement_drop: a follow ended: its account is no longer endorsed,
-- unless it is followed again (read with the removal: a follow and an
-- endorsement made again meanwhile stay).
-- KEYS[1]: endo:{uid}  the accounts uid endorses
-- KEYS[2]: fing:{uid}  the accounts uid follows
-- ARGV[1]: the account
-- returns: 1 if it removed the endorsement, 0 if not
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
return redis.call('ZREM', KEYS[1], ARGV[1])
