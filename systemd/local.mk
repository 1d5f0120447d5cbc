systemdsystemunit_DATA = systemd/kfixd.service systemd/kfixd.socket
sysusers_DATA = systemd/kfix.sysusers
tmpfiles_DATA = systemd/kfix.tmpfiles
examplesdir = $(docdir)/examples
examples_DATA = systemd/kfix.conf.example
EXTRA_DIST += systemd/kfixd.service.in systemd/kfixd.socket \
	systemd/kfix.sysusers systemd/kfix.tmpfiles.in systemd/kfix.conf.example.in
CLEANFILES += systemd/kfixd.service systemd/kfix.tmpfiles systemd/kfix.conf.example

# The unit, tmpfiles and the example name the configured paths.
systemd/kfixd.service: systemd/kfixd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && $(do_subst) $(srcdir)/systemd/kfixd.service.in > $@
systemd/kfix.tmpfiles: systemd/kfix.tmpfiles.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && $(do_subst) $(srcdir)/systemd/kfix.tmpfiles.in > $@
systemd/kfix.conf.example: systemd/kfix.conf.example.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && $(do_subst) $(srcdir)/systemd/kfix.conf.example.in > $@
