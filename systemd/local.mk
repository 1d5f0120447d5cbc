systemdsystemunit_DATA = systemd/kfixd.service systemd/kfixd.socket
sysusers_DATA = systemd/kfix.sysusers
tmpfiles_DATA = systemd/kfix.tmpfiles
examplesdir = $(docdir)/examples
dist_examples_DATA = systemd/kfix.conf.example
EXTRA_DIST += systemd/kfixd.service.in systemd/kfixd.socket \
	systemd/kfix.sysusers systemd/kfix.tmpfiles
CLEANFILES += systemd/kfixd.service

systemd/kfixd.service: systemd/kfixd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' $(srcdir)/systemd/kfixd.service.in > $@
