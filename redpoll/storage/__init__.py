"""Storage: the connection to Redis or Valkey (store, the multiplexed connection,
redis-py's adapter), the embedded server, the two topologies (one server, a
cluster) and their Lua. It names status and user keys but decodes no record:
it returns plain rows and takes what turns them into statuses from its
caller."""
