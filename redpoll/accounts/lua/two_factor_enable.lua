-- two_factor_enable: turn two-factor sign-in on with the secret a code confirmed.
-- KEYS[1]: the account's secrets hash sec:{uid}
-- KEYS[2]: its pending set-up tfa:{uid}:setup (the sealed secret)
-- ARGV[1]: the sealed secret the code was checked against
-- ARGV[2]: the step of that code (used: it cannot sign in again)
-- ARGV[3]: the recovery codes' digests, space-separated
-- returns 1 when on; 0 when the set-up is gone or was replaced; -1 when on already
if redis.call('HEXISTS', KEYS[1], 'otp_secret') == 1 then return -1 end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'otp_secret', ARGV[1], 'otp_step', ARGV[2], 'otp_recovery', ARGV[3])
redis.call('DEL', KEYS[2])
return 1
