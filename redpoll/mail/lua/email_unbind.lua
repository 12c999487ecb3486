-- email_unbind: drop an e-mail index entry if it still names this account.
-- KEYS[1]: the index entry email:{address}
-- ARGV[1]: the account's id
-- returns: 1 if dropped, 0 if it names another account or none
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
