"""Polls: a status's question with 2-4 options, votes (one per account),
the end of a poll told to its voters and author."""
