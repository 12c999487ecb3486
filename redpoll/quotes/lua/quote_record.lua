-- quote_record: a new status's accepted quote of another, recorded once.
-- Run by the post journal's first step (redpoll.quotes.quotes.record), in the
-- posting call and again by a worker that replays it: idempotent.
-- KEYS[1]: the quoted status's hash st:{qsid}
-- KEYS[2]: its accepted quotes quotes:{qsid} (zset)
-- KEYS[3]: its revoked quotes qrev:{qsid} (set)
-- ARGV[1]: the quoting status id
-- returns: the quoted status's author id when the quote is (now or already)
-- accepted; 0 when the quoted status is gone or the quote was revoked
local call = redis.call
if call('EXISTS', KEYS[1]) == 0 or call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return 0
end
if call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return 0 end
call('ZADD', KEYS[2], ARGV[1], ARGV[1])
return tonumber(call('HGET', KEYS[1], 'uid')) or 0
