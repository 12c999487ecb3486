-- mark_merged: before a merge puts ids into a timeline on a single server,
-- raise the delivery watermark (see deliver_fast.lua) to the newest of them,
-- marked 'm' (merged): a fan-out of that very id must then look before it
-- pushes. Run in the same ordered pipeline, before merge.lua.
-- KEYS[1]: the watermark "<id>:<d|m>"
-- ARGV[1]: the newest id about to be merged
-- returns: 1 if raised, 0 if it was higher already
local mark = redis.call('GET', KEYS[1]) or '0:d'
local wid = tonumber(string.sub(mark, 1, string.find(mark, ':', 1, true) - 1))
if tonumber(ARGV[1]) < wid then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. ':m')
return 1
