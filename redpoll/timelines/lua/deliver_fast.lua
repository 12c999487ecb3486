-- deliver_fast: the single server's blind push of one status id onto many
-- timelines (a fast-path variant of deliver.lua; single server only, since
-- its keys span every slot).
-- KEYS[1] is the delivery watermark "<id>:<d|m>", the highest id ever
-- delivered (d) or merged (m) anywhere (mark_merged.lua),
-- and KEYS[2] the set of this status's batches already pushed. An id at or
-- above the watermark meets no newer id at any timeline's head; if also no
-- merge has put it anywhere (not 'm' at its own id) and this batch has not
-- been pushed before (SADD), it is in none of these timelines either, so it
-- goes on every head without looking: one command per timeline, as cheap as
-- a bare LPUSH. Anything else (a re-run, a fan-out overtaken by a newer one,
-- a follow that copied the id in first) returns -1 and the caller runs
-- deliver.lua on the same timelines.
-- KEYS[1]: the watermark; KEYS[2]: the batch set; KEYS[3..]: timeline lists
-- ARGV[1]: status id (decimal string)
-- ARGV[2]: cap
-- ARGV[3]: name of this batch, e.g. its cursor
-- ARGV[4]: seconds to keep the batch set
-- returns: number of timelines the id was pushed onto, or -1 (not taken)
local call = redis.call
local sid = ARGV[1]
local id = tonumber(sid)
local cap = tonumber(ARGV[2])
local mark = call('GET', KEYS[1]) or '0:d'
local sep = string.find(mark, ':', 1, true)
local wid, how = tonumber(string.sub(mark, 1, sep - 1)), string.sub(mark, sep + 1)
if id < wid or (id == wid and how ~= 'd') then return -1 end
if id > wid then call('SET', KEYS[1], sid .. ':d') end
if call('SADD', KEYS[2], ARGV[3]) == 0 then return -1 end
call('EXPIRE', KEYS[2], ARGV[4])
for i = 3, #KEYS do
  if call('LPUSH', KEYS[i], sid) > cap then call('RPOP', KEYS[i]) end
end
return #KEYS - 2
