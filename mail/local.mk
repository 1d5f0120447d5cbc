# mail module: reading mail (GMime), composing patch mail, SMTP (libcurl),
# public-inbox archives (libgit2).
noinst_LIBRARIES += mail/libmail.a
mail_libmail_a_SOURCES = \
	mail/parse.h mail/mail-internal.h \
	mail/parse.c mail/text.c mail/syzbot.c mail/commands.c mail/patch.c \
	mail/json.c
mail_libmail_a_CFLAGS = $(AM_CFLAGS) $(GMIME_CFLAGS) $(LIBCURL_CFLAGS) \
	$(LIBGIT2_CFLAGS) $(JANSSON_CFLAGS)
MAIL_LIBS = mail/libmail.a $(GMIME_LIBS) $(LIBCURL_LIBS) $(LIBGIT2_LIBS) $(JANSSON_LIBS)

CTL_EXTRA_SOURCES += daemon/ctl-mail.c
