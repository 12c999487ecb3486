-- large_followees: the large accounts (redpoll.hybrid) a user still follows,
-- the ones a home page merges at read time, and (only when there are some)
-- the accounts whose boosts the user hides. An entry left behind by an
-- unfollow or a block cut short is not returned (the follow set decides).
-- KEYS[1]: keys.large_following(uid); KEYS[2]: keys.following(uid);
-- KEYS[3]: keys.hidden_reblogs(uid)
-- ARGV[1]: at most this many large accounts
-- returns: {large account ids, hidden boosters' ids}
local members = redis.call('SMEMBERS', KEYS[1])
if #members == 0 then return {{}, {}} end
local scores = redis.call('ZMSCORE', KEYS[2], unpack(members))
local out, cap = {}, tonumber(ARGV[1])
for i, uid in ipairs(members) do
  if scores[i] then
    out[#out + 1] = uid
    if #out >= cap then break end
  end
end
if #out == 0 then return {out, {}} end
return {out, redis.call('SMEMBERS', KEYS[3])}
