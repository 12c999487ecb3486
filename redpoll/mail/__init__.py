"""E-mail: messages sent over SMTP by background jobs (``delivery``,
``smtp``, ``messages``), the single-use links they carry (``links``), and
what members need them for: confirming a sign-up's address
(``confirmation``), a forgotten password (``recovery``), changing one's
address (``address``), and the moderators' and the approval flow's notices
(``notices``). Everything is off while REDPOLL_SMTP_HOST is unset."""
