-- notification_page: one page of a user's notifications by Mastodon's id
-- cursors, newest first, keeping only those that pass the filters and
-- reading on past the others up to a bound.
-- KEYS[1]: notification ids zset nt:{uid} (id -> id)
-- KEYS[2]: records hash ntr:{uid} (id -> JSON {type, actor, ...})
-- ARGV[1]: max_id or ''    ARGV[2]: since_id or ''    ARGV[3]: min_id or ''
-- ARGV[4]: limit
-- ARGV[5]: types to keep, comma-separated ('' = all)
-- ARGV[6]: types to leave out, comma-separated
-- ARGV[7]: only those caused by this account id ('' = any)
-- ARGV[8]: most notifications looked at
-- ARGV[9]: '1' to keep filtered ones too (their records start '{"filtered":1,'), else ''
-- returns: flat {id, record, id, record, ...} newest first
local limit, budget = tonumber(ARGV[4]), tonumber(ARGV[8])
local function set_of(csv)
  local s, any = {}, false
  for t in string.gmatch(csv, '[^,]+') do s[t] = true; any = true end
  return s, any
end
local keep, filtered = set_of(ARGV[5])
local drop = set_of(ARGV[6])
local account = ARGV[7]
local top = ARGV[1] ~= '' and ('(' .. ARGV[1]) or '+inf'
local upward = ARGV[3] ~= ''
local bottom = upward and ('(' .. ARGV[3]) or (ARGV[2] ~= '' and ('(' .. ARGV[2]) or '-inf')
local found = {}
local offset = 0
while #found < limit * 2 and budget > 0 do
  local n = math.min(limit, budget)
  local ids
  if upward then
    ids = redis.call('ZRANGEBYSCORE', KEYS[1], bottom, top, 'LIMIT', offset, n)
  else
    ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], top, bottom, 'LIMIT', offset, n)
  end
  if #ids == 0 then break end
  offset = offset + #ids
  budget = budget - #ids
  local records = redis.call('HMGET', KEYS[2], unpack(ids))
  for i = 1, #ids do
    local raw = records[i]
    if raw and (ARGV[9] == '1' or string.sub(raw, 1, 14) ~= '{"filtered":1,') then
      local r = cjson.decode(raw)
      if (not filtered or keep[r['type']]) and not drop[r['type']]
          and (account == '' or tostring(r['actor']) == account) then
        found[#found + 1] = ids[i]
        found[#found + 1] = raw
        if #found >= limit * 2 then break end
      end
    end
  end
  if #ids < n then break end
end
if upward then  -- found oldest first: the page is newest first
  local page = {}
  for i = #found - 1, 1, -2 do page[#page + 1] = found[i]; page[#page + 1] = found[i + 1] end
  return page
end
return found
