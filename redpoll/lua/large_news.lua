-- large_news: the large accounts a home merges (redpoll.hybrid) and what each
-- has posted since the home last caught up with it, for a home page on a
-- single server, sent with read_page_listed.lua in one round trip. An
-- account has news when its profile sequence (the user record's 'pseq',
-- bumped by record_post.lua for every status it records, boosts included)
-- differs from the one keys.large_marks(uid) holds for it; then its newest
-- ids are read: as many as were posted since, plus ARGV[3] more (a status
-- recorded after a newer one of the same author: ids are taken before the
-- profile write), at most ARGV[2] (an account with no mark yet: ARGV[2]).
-- Ids the top ARGV[8] entries of the home already hold are left out, and
-- so are the ids read below the news that are older than all of those
-- entries (a status recorded late is one of the newest), so that the
-- catch-up reads only what may be new. A page whose accounts have no news reads no profile.
-- Single server only: it reads keys it builds itself (user records,
-- profiles) from the name parts in ARGV[4..7] (redpoll.keys.key_parts).
-- An entry left behind by an unfollow or a block cut short is not returned
-- (the follow set decides), as in large_followees.lua.
-- KEYS[1]: keys.large_following(uid); KEYS[2]: keys.following(uid);
-- KEYS[3]: keys.hidden_reblogs(uid); KEYS[4]: keys.large_marks(uid);
-- KEYS[5]: keys.home(uid)
-- ARGV[1]: at most this many large accounts (limits.MERGED_ACCOUNTS_MAX)
-- ARGV[2]: at most this many ids read of one account (limits.CATCH_UP_PER_ACCOUNT)
-- ARGV[3]: ids read below the news (limits.CATCH_UP_OVERLAP)
-- ARGV[4], ARGV[5]: a user key's text before and after the user id
-- ARGV[6], ARGV[7]: a profile key's text before and after the user id
-- ARGV[8]: entries of the home checked (limits.CATCH_UP_HOME_CHECK)
-- returns: {large account ids, hidden boosters' ids (only when there are
--           large accounts), {account, its pseq, {its newest ids}} for each
--           account with news, but not those ids the home's top holds}
local members = redis.call('SMEMBERS', KEYS[1])
if #members == 0 then return {{}, {}, {}} end
local scores = redis.call('ZMSCORE', KEYS[2], unpack(members))
local large, cap = {}, tonumber(ARGV[1])
for i, uid in ipairs(members) do
  if scores[i] then
    large[#large + 1] = uid
    if #large >= cap then break end
  end
end
if #large == 0 then return {{}, {}, {}} end
local marks = redis.call('HMGET', KEYS[4], unpack(large))
local most, overlap = tonumber(ARGV[2]), tonumber(ARGV[3])
local news, held, floor = {}, nil, 0
for i, uid in ipairs(large) do
  local seq = redis.call('HGET', ARGV[4] .. uid .. ARGV[5], 'pseq')
  if seq and seq ~= marks[i] then
    local count, posted = most, most
    if marks[i] then
      posted = tonumber(seq) - tonumber(marks[i])
      if posted > 0 then count = math.min(most, posted + overlap) else posted = most end
    end
    local ids = redis.call('ZRANGE', ARGV[6] .. uid .. ARGV[7], 0, count - 1, 'REV')
    if not held then
      local top = redis.call('LRANGE', KEYS[5], 0, tonumber(ARGV[8]) - 1)
      held = {}
      for _, v in ipairs(top) do held[v] = true end
      -- below the top's last entry, only a full top rules out a late one
      floor = #top == tonumber(ARGV[8]) and top[#top] + 0 or 0
    end
    local new = {}
    for k, v in ipairs(ids) do
      if not held[v] and (k <= posted or v + 0 > floor) then new[#new + 1] = v end
    end
    news[#news + 1] = {uid, seq, new}
  end
end
return {large, redis.call('SMEMBERS', KEYS[3]), news}
