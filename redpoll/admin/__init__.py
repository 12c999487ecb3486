"""Staff: roles and their permissions (``roles``), who is acting
(``staff``) and the audit log of moderation actions (``audit``). The admin
API's domain functions that check them sit with what they change: accounts
and reports in redpoll.moderation (admin_accounts, admin_reports), domain
blocks in redpoll.federation (domain_admin)."""
