-- media_create: write a new upload's record (state 'processing'), once
-- (redpoll/media/uploads.py). A record or tombstone already there (a
-- replay, or an upload its journal gave up: media_drop 'void') is left as
-- it is, so a late write never brings back what was given up.
-- KEYS[1]: the record med:{uid}:<mid>
-- ARGV: field/value pairs
-- returns: 1 written, 0 something was there already
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
