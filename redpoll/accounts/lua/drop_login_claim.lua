-- drop_login_claim: free a login claimed by a sign-up that was given up
-- (settle_sign_up.lua), if that sign-up still holds it; compare-and-delete,
-- so a claim taken over meanwhile by another sign-up stays.
-- KEYS[1]: login index login:{lowercased}
-- ARGV[1]: the prefix of the given-up sign-up's claim, '<uid>:'
-- returns: 1 if dropped, 0 if held by another
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, #ARGV[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
