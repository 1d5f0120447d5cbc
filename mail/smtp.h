/* SMTP submission through libcurl: smtp:// with STARTTLS or smtps://. */
#ifndef KFIX_MAIL_SMTP_H
#define KFIX_MAIL_SMTP_H

#include <stddef.h>

struct smtp_opts {
	const char *url;      /* smtp://host:587 or smtps://host:465 */
	const char *user;     /* NULL: no AUTH */
	const char *password;
	int timeout_sec;      /* whole transaction; 0: 120 */
};

/* Sends msg (LF or CRLF line ends; converted to CRLF) from the envelope
 * sender to every recipient (addr-specs).  Returns 0 when the server took
 * it; -EAGAIN when it may work later (4xx answers, no connection, time-
 * out); another negative errno when it will not (5xx: -EREMOTEIO, bad URL
 * or TLS setup: -EINVAL/-EPERM), with *ret_error set to the reason.
 *
 * smtp:// insists on STARTTLS, except towards a loopback address
 * (127.0.0.1, ::1, localhost), where a plain session is accepted. */
int smtp_send(const struct smtp_opts *o, const char *msg, size_t len,
	      const char *env_from, char *const *rcpts, char **ret_error);

/* The envelope of a composed message: the From address and every To and
 * Cc address, as addr-specs. */
int smtp_envelope(const char *msg, size_t len, char **ret_from, char ***ret_rcpts,
		  char **ret_error);

#endif
