-- large_profiles: large_followees.lua on a single server, with what a home
-- page that merges those accounts (redpoll.hybrid) reads first, so that the
-- page is one round trip when the records it shows are kept: the first read
-- of each large account's profile in the page's window (hybrid.prefetch's
-- reads), those ids' versions from the log of changed statuses
-- (keys.CHANGED_STATUSES; < 0 = deleted, absent = never changed) and each
-- large account's 'rev' (a status in a profile is its owner's: a boost's
-- record is the booster's). Sent with read_page_listed.lua in one round trip.
-- Single server only: it reads keys it builds itself (profiles, user
-- records), from the name parts in ARGV[7..10] (redpoll.keys.key_parts).
-- An entry left behind by an unfollow or a block cut short is not returned
-- (the follow set decides), as in large_followees.lua.
-- KEYS[1]: keys.large_following(uid); KEYS[2]: keys.following(uid);
-- KEYS[3]: keys.hidden_reblogs(uid); KEYS[4]: keys.CHANGED_STATUSES
-- ARGV[1]: at most this many large accounts
-- ARGV[2]: '1' to read upward (a min_id page: the lowest ids), '' downward
-- ARGV[3], ARGV[4]: the window, both ends excluded: low and high ids
-- ARGV[5]: the page's limit
-- ARGV[6]: ids read first from each profile, at least
--          (limits.MERGE_FIRST_READ_MIN; hybrid.first_read's rule)
-- ARGV[7], ARGV[8]: a profile key's text before and after the user id
-- ARGV[9], ARGV[10]: a user key's text before and after the user id
-- returns: {large account ids, hidden boosters' ids (only when there are
--           large accounts), ids asked of each profile,
--           {one list of ids per large account, in the same order},
--           {each of those ids' version, in the same order, flattened;
--            false = never changed},
--           {rev of each large account, in the same order; false = none}}
local members = redis.call('SMEMBERS', KEYS[1])
if #members == 0 then return {{}, {}, 0, {}, {}, {}} end
local scores = redis.call('ZMSCORE', KEYS[2], unpack(members))
local large, cap = {}, tonumber(ARGV[1])
for i, uid in ipairs(members) do
  if scores[i] then
    large[#large + 1] = uid
    if #large >= cap then break end
  end
end
if #large == 0 then return {{}, {}, 0, {}, {}, {}} end
local limit = tonumber(ARGV[5])
-- hybrid.first_read: twice each profile's share of the page, at least the
-- minimum, at most the page
local count = math.min(limit, math.max(tonumber(ARGV[6]), math.ceil(2 * limit / #large)))
local low, high = '(' .. ARGV[3], '(' .. ARGV[4]
local profiles, all, revs = {}, {}, {}
for i, uid in ipairs(large) do
  local key = ARGV[7] .. uid .. ARGV[8]
  local ids
  if ARGV[2] == '1' then
    ids = redis.call('ZRANGE', key, low, high, 'BYSCORE', 'LIMIT', 0, count)
  else
    ids = redis.call('ZRANGE', key, high, low, 'BYSCORE', 'REV', 'LIMIT', 0, count)
  end
  profiles[i] = ids
  for _, id in ipairs(ids) do all[#all + 1] = id end
  -- (an HGET each: ~0.5 us; a SORT_RO ... GET over the set measured twice that)
  revs[i] = redis.call('HGET', ARGV[9] .. uid .. ARGV[10], 'rev')
end
local versions = {}
if #all > 0 then versions = redis.call('ZMSCORE', KEYS[4], unpack(all)) end
-- a Lua array with false in it reaches the client whole (nil would cut it)
return {large, redis.call('SMEMBERS', KEYS[3]), count, profiles, versions, revs}
