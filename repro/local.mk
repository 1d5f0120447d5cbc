# repro module: builds, VMs over SSH, reproducer runs, verdicts.
noinst_LIBRARIES += repro/librepro.a
repro_librepro_a_SOURCES = \
	repro/ssh.c repro/ssh-internal.h \
	repro/build.c repro/build.h \
	repro/vm.c repro/vm.h repro/vm-qemu.c \
	repro/run.c repro/run.h repro/run-classify.c
repro_librepro_a_CFLAGS = $(AM_CFLAGS) $(LIBSSH2_CFLAGS) $(JANSSON_CFLAGS)
REPRO_LIBS = repro/librepro.a $(LIBSSH2_LIBS) -lpthread

CTL_EXTRA_SOURCES += daemon/ctl-repro.c
