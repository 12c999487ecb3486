"""The records: statuses and users as stored, read one or many under the memo
rule (redpoll.core.memo), a profile's newest ids, and a status's state (its
counts and the viewer's flags). What every feature reads; it writes nothing.
"""
