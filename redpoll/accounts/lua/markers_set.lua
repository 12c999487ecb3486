-- markers_set: move one or more of a user's read markers, each to the id
-- given, bumping that marker's version (Mastodon's optimistic counter). One
-- script: several markers move together or not at all.
-- KEYS[1]: markers hash mk:{uid} (timeline -> "<last_read_id>:<version>:<ms>")
-- ARGV[1]: now in ms
-- ARGV[2..]: pairs timeline, last_read_id
-- returns: flat {timeline, "<last_read_id>:<version>:<ms>", ...} as stored now
local out = {}
for i = 2, #ARGV, 2 do
  local name = ARGV[i]
  local cur = redis.call('HGET', KEYS[1], name)
  local version = 0
  if cur then version = tonumber(string.match(cur, '^[^:]*:(%d+):')) or 0 end
  local value = ARGV[i + 1] .. ':' .. (version + 1) .. ':' .. ARGV[1]
  redis.call('HSET', KEYS[1], name, value)
  out[#out + 1] = name
  out[#out + 1] = value
end
return out
