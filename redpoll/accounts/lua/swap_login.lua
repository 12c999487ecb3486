-- swap_login: hand a login claim over from an orphaned holder (a sign-up that
-- died before writing its user) to a new user id; compare-and-set.
-- KEYS[1]: login index login:{lowercased}
-- ARGV[1]: the holder seen as orphaned
-- ARGV[2]: the new user id
-- returns: 1 if swapped, 0 if the holder changed meanwhile
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
