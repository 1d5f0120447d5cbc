# mail module
MAIL_LIBS =
