/* Test VMs on a VM host reached over SSH.  A backend is a struct of
 * function pointers; "qemu" starts qemu-system-x86_64 on the VM host with
 * the kernel and an initramfs, the serial console in a file there and the
 * guest's SSH port forwarded to the VM host's loopback only. */
#ifndef KFIX_REPRO_VM_H
#define KFIX_REPRO_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/macro.h"

struct config;

struct vm_opts {
	char *name;
	char *backend;
	char *ssh_host, *ssh_user, *ssh_key, *known_hosts;
	int ssh_port;
	char *image;		 /* initramfs on the VM host */
	char *guest_user, *guest_key, *guest_known_hosts;
	char *qemu;
	char *workdir;		 /* on the VM host */
	char *cmdline;		 /* extra kernel command line */
	char *syzkaller;	 /* a syzkaller build on this host; NULL: none */
	int count, memory, cpus;
	/* a reproducer's runs per kernel, and the attempts allowed for them */
	int runs, max_attempts;
	/* kmemleak scans after the reproducer on patched kernels */
	bool leak_check;
	uint64_t boot_timeout_usec, run_timeout_usec;
};
int vm_opts_from_config(const struct config *cfg, const char *name, struct vm_opts *ret);
void vm_opts_free(struct vm_opts *o);

/* A boot failure's message (start's *ret_error) holds this, then the
 * crash's title, when the kernel crashed while booting. */
#define VM_BOOT_CRASH_STORY "the kernel crashed while booting: "

/* Why a VM operation failed, for the run outcome. */
enum vm_failure {
	VM_OK,
	VM_INFRA,     /* VM host unreachable, auth, host key, qemu missing */
	VM_NO_BOOT,   /* the kernel ran but the guest never answered */
};

struct vm_exec_result {
	int exit_status; /* -1 when the guest went away */
	bool lost, timed_out;
	char *output;
	size_t output_len;
};
void vm_exec_result_free(struct vm_exec_result *r);

struct vm;

struct vm_backend {
	const char *name;
	/* Starts a VM and waits for guest SSH.  On failure returns < 0 with
	 * *ret_failure and *ret_error set; the VM is already torn down. */
	int (*start)(const struct vm_opts *o, const char *kernel, struct vm **ret,
		     enum vm_failure *ret_failure, char **ret_error);
	int (*exec)(struct vm *vm, const char *cmd, const void *in, size_t in_len,
		    uint64_t timeout_usec, struct vm_exec_result *ret);
	/* True when the VM has stopped by itself (a panic with -no-reboot). */
	bool (*exited)(struct vm *vm);
	/* The serial console so far (at most max bytes, the last ones). */
	int (*console)(struct vm *vm, size_t max, char **ret, size_t *ret_len);
	/* Stops the VM and removes its files; never leaves a process. */
	void (*stop)(struct vm *vm);
};

const struct vm_backend *vm_backend_find(const char *name);
extern const struct vm_backend vm_backend_qemu;

#endif
