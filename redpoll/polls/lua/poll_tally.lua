-- poll_tally: the counts of a poll of another server, as its server sends
-- them (its votes are counted there), written in one step, and only while
-- the record holds the generation of options they are for (an edit that
-- changed the options meanwhile: nothing written).
-- KEYS[1]: the status hash st:{sid}
-- KEYS[2]: the counts hash poll:{sid}:<gen>
-- ARGV[1]: the generation <gen>
-- ARGV[2..]: field/value pairs ('<index>' -> votes, 'n' -> voters)
-- returns: 1 written, 0 not (the status is gone or at another generation)
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return 0
end
local raw = redis.call('HGET', KEYS[1], 'x:poll')
if not raw then
  return 0
end
local ok, poll = pcall(cjson.decode, raw)
if not ok or type(poll) ~= 'table' or tostring(poll['gen']) ~= ARGV[1]
    and string.format('%d', poll['gen'] or -1) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
return 1
