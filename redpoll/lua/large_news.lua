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
-- profiles, statuses, boosts) from the name parts in ARGV[4..7] and
-- ARGV[9..12] (redpoll.keys.key_parts).
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
-- ARGV[9], ARGV[10]: a status key's text before and after the status id
-- ARGV[11], ARGV[12]: the same for keys.reblogged_by
-- ARGV[13]: boosts read of each (limits.CATCH_UP_BOOSTS_READ)
-- returns: {large account ids, hidden boosters' ids (only when there are
--           large accounts), {account, its pseq, {its newest ids}} for each
--           account with news, but not those ids the home's top holds,
--           {each of those ids' HGETALL, in the same order, flattened},
--           {each one's boosts: booster, boost id, ...; same order}}
-- the members with each one's pseq, in one call (an HGET each costs a call
-- apiece in the loop)
local found = redis.call('SORT_RO', KEYS[1], 'BY', 'nosort', 'GET', '#',
                          'GET', ARGV[4] .. '*' .. ARGV[5] .. '->pseq')
if #found == 0 then return {{}, {}, {}, {}, {}} end
local members, seqs = {}, {}
for i = 1, #found, 2 do
  members[#members + 1] = found[i]
  seqs[#seqs + 1] = found[i + 1]
end
local scores = redis.call('ZMSCORE', KEYS[2], unpack(members))
local large, seq_of, cap = {}, {}, tonumber(ARGV[1])
for i, uid in ipairs(members) do
  if scores[i] then
    large[#large + 1] = uid
    seq_of[#large] = seqs[i]
    if #large >= cap then break end
  end
end
if #large == 0 then return {{}, {}, {}, {}, {}} end
local marks = redis.call('HMGET', KEYS[4], unpack(large))
local most, overlap = tonumber(ARGV[2]), tonumber(ARGV[3])
local news, held, floor, rows, boosts = {}, nil, 0, {}, {}
for i, uid in ipairs(large) do
  local seq = seq_of[i]
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
      if not held[v] and (k <= posted or v + 0 > floor) then
        new[#new + 1] = v
        rows[#rows + 1] = redis.call('HGETALL', ARGV[9] .. v .. ARGV[10])
        boosts[#boosts + 1] = redis.call('ZRANGE', ARGV[11] .. v .. ARGV[12], '(' .. v, '+inf',
                                         'BYSCORE', 'LIMIT', 0, ARGV[13], 'WITHSCORES')
      end
    end
    news[#news + 1] = {uid, seq, new}
  end
end
return {large, redis.call('SMEMBERS', KEYS[3]), news, rows, boosts}
