-- large_followees: the large accounts a user follows whose statuses their
-- home merges (redpoll.timelines.hybrid), with the profile sequence up to which the
-- home has caught up with each, and the boosters whose boosts they hide (a
-- catch-up asks the home rule). Sent with the home page's
-- read (same slot); each account's own 'pseq' is in its slot, read after.
-- On both topologies (redpoll.timelines.hybrid.read_home).
-- An entry left behind by an unfollow or a block cut short is not returned:
-- the follow set decides.
-- KEYS[1]: keys.large_following(uid); KEYS[2]: keys.following(uid);
-- KEYS[3]: keys.hidden_reblogs(uid); KEYS[4]: keys.large_marks(uid)
-- ARGV[1]: at most this many accounts (limits.MERGED_ACCOUNTS_MAX)
-- returns: {account ids, their marks (false = none), hidden boosters' ids
--           (only when there are accounts)}
local members = redis.call('SMEMBERS', KEYS[1])
if #members == 0 then return {{}, {}, {}} end
local scores = redis.call('ZMSCORE', KEYS[2], unpack(members))
local out, cap = {}, tonumber(ARGV[1])
for i, uid in ipairs(members) do
  if scores[i] then
    out[#out + 1] = uid
    if #out >= cap then break end
  end
end
if #out == 0 then return {out, {}, {}} end
return {out, redis.call('HMGET', KEYS[4], unpack(out)), redis.call('SMEMBERS', KEYS[3])}
