-- settle_sign_up: decide a sign-up whose caller never released its journal
-- (jobs.SignUpJob, replayed by a worker): it either wrote the user, or it
-- never will, because this marks it void and create_user.lua then refuses.
-- Atomic, so a late create_user either happened before (counted) or fails.
-- KEYS[1]: user hash u:{uid}
-- KEYS[2]: the sign-up's void marker void:{uid} (same slot)
-- returns: 1 if the user exists, 0 if the sign-up is now void
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
redis.call('SET', KEYS[2], '1')
return 0
