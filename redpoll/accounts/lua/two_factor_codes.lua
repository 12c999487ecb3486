-- two_factor_codes: a new set of recovery codes (the old ones stop working).
-- KEYS[1]: the account's secrets hash sec:{uid}
-- ARGV[1]: the new codes' digests, space-separated
-- returns 1; 0 when two-factor sign-in is off (nothing written)
if redis.call('HEXISTS', KEYS[1], 'otp_secret') == 0 then return 0 end
redis.call('HSET', KEYS[1], 'otp_recovery', ARGV[1])
return 1
