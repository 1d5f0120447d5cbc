# The man pages name the configured paths: generated from their .in.
man_MANS += doc/kfixd.8 doc/kfixctl.1 doc/kfix.conf.5
EXTRA_DIST += doc/kfixd.8.in doc/kfixctl.1.in doc/kfix.conf.5.in doc/HACKING.md
CLEANFILES += doc/kfixd.8 doc/kfixctl.1 doc/kfix.conf.5

doc/kfixd.8: doc/kfixd.8.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc && $(do_subst) $(srcdir)/doc/kfixd.8.in > $@
doc/kfixctl.1: doc/kfixctl.1.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc && $(do_subst) $(srcdir)/doc/kfixctl.1.in > $@
doc/kfix.conf.5: doc/kfix.conf.5.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc && $(do_subst) $(srcdir)/doc/kfix.conf.5.in > $@
