-- media_step: one step of an upload's processing on its record, only
-- while it is processing: note the names of the files about to be
-- written, then mark it ready (or failed) with what processing made. A
-- record given up meanwhile (media_drop 'void': its journal's producer
-- was taken for dead) or removed is not touched, and the caller learns it.
-- KEYS[1]: the record med:{uid}:<mid>
-- ARGV: field/value pairs
-- returns: 1 written, 0 the record is no longer processing
if redis.call('HGET', KEYS[1], 'state') ~= 'processing' then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
redis.call('HINCRBY', KEYS[1], 'v', 1)
return 1
