noinst_LIBRARIES += common/libcommon.a
common_libcommon_a_SOURCES = \
	common/clock.h common/macro.h \
	common/buf.c common/buf.h \
	common/conf.c common/conf.h common/conf-schema.c \
	common/fileio.c common/fileio.h \
	common/json.c common/json.h \
	common/log.c common/log.h \
	common/proc.c common/proc.h \
	common/slot.c common/slot.h \
	common/strutil.c common/strutil.h \
	common/url.c common/url.h
common_libcommon_a_CFLAGS = $(AM_CFLAGS) $(LIBGIT2_CFLAGS) $(JANSSON_CFLAGS) $(SYSTEMD_CFLAGS) \
	$(LIBCURL_CFLAGS)
COMMON_LIBS = common/libcommon.a $(LIBGIT2_LIBS) $(JANSSON_LIBS) $(SYSTEMD_LIBS) $(LIBCURL_LIBS)
