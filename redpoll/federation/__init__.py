"""Federation over ActivityPub: discovery documents, HTTP signatures, the
inbox, delivery to other servers, and remote accounts and statuses."""
