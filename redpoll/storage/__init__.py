"""Storage: the connection to Redis or Valkey (store, the multiplexed connection,
redis-py's adapter), the embedded server, the two topologies (one server, a
cluster) and their Lua. It knows no statuses or users: it returns plain rows
and takes what turns them into records from its caller."""
