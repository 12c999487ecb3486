-- quote_record: a new status's quote of another, recorded once.
-- Run by the post journal's first step (redpoll.quotes.quotes.record), in the
-- posting call and again by a worker that replays it: idempotent.
-- KEYS[1]: the quoted status's hash st:{qsid}
-- KEYS[2]: its accepted quotes quotes:{qsid} (zset)
-- KEYS[3]: its revoked quotes qrev:{qsid} (set)
-- KEYS[4]: (optional) its quotes' states qst:{qsid} (hash), for a pending quote
-- ARGV[1]: the quoting status id
-- ARGV[2]: (optional) "pending": a quote across servers, recorded pending
-- unless it has a state already (a replay after its Accept or Reject)
-- returns: the quoted status's author id when the quote is (now or already)
-- accepted; 0 when the quoted status is gone, the quote was revoked, or it
-- is not accepted (yet)
local call = redis.call
if call('EXISTS', KEYS[1]) == 0 or call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return 0
end
if call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return 0 end
if ARGV[2] == 'pending' then
  if call('ZSCORE', KEYS[2], ARGV[1]) then
    return tonumber(call('HGET', KEYS[1], 'uid')) or 0
  end
  call('HSETNX', KEYS[4], ARGV[1], 'pending')
  return 0
end
call('ZADD', KEYS[2], ARGV[1], ARGV[1])
return tonumber(call('HGET', KEYS[1], 'uid')) or 0
