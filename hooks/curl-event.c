/* libcurl's multi interface in an sd-event loop; see curl-event-internal.h. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>

#include "curl-event-internal.h"

static uint64_t now_mono(struct curl_event *ce)
{
	uint64_t t = 0;

	sd_event_now(ce->event, CLOCK_MONOTONIC, &t);
	return t;
}

static void check_done(struct curl_event *ce)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(ce->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		ce->done(ce->userdata, m->easy_handle, m->data.result);
	}
}

static int on_socket_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct curl_event *ce = userdata;
	int mask = 0, running;

	if (revents & EPOLLIN)
		mask |= CURL_CSELECT_IN;
	if (revents & EPOLLOUT)
		mask |= CURL_CSELECT_OUT;
	if (revents & (EPOLLERR | EPOLLHUP))
		mask |= CURL_CSELECT_ERR;
	curl_multi_socket_action(ce->multi, fd, mask, &running);
	check_done(ce);
	return 0;
}

static int on_curl_socket(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct curl_event *ce = userp;
	sd_event_source *src = socketp;
	uint32_t events = 0;

	if (what == CURL_POLL_REMOVE) {
		sd_event_source_disable_unref(src);
		curl_multi_assign(ce->multi, fd, NULL);
		return 0;
	}
	if (what & CURL_POLL_IN)
		events |= EPOLLIN;
	if (what & CURL_POLL_OUT)
		events |= EPOLLOUT;
	if (src)
		return sd_event_source_set_io_events(src, events) < 0 ? -1 : 0;
	if (sd_event_add_io(ce->event, &src, fd, events, on_socket_event, ce) < 0)
		return -1;
	curl_multi_assign(ce->multi, fd, src);
	return 0;
}

static int on_curl_timer_fired(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct curl_event *ce = userdata;
	int running;

	curl_multi_socket_action(ce->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(ce);
	return 0;
}

static int on_curl_timer(CURLM *m, long timeout_ms, void *userp)
{
	struct curl_event *ce = userp;

	if (timeout_ms < 0)
		return sd_event_source_set_enabled(ce->timer, SD_EVENT_OFF) < 0 ? -1 : 0;
	if (sd_event_source_set_time(ce->timer,
				     now_mono(ce) + (uint64_t)timeout_ms * 1000) < 0 ||
	    sd_event_source_set_enabled(ce->timer, SD_EVENT_ONESHOT) < 0)
		return -1;
	return 0;
}

int curl_event_setup(struct curl_event *ce, sd_event *event, curl_event_done_fn done,
		     void *userdata)
{
	int r;

	if (ce->multi)
		return 0;
	ce->event = event;
	ce->done = done;
	ce->userdata = userdata;
	ce->multi = curl_multi_init();
	if (!ce->multi)
		return -ENOMEM;
	curl_multi_setopt(ce->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	curl_multi_setopt(ce->multi, CURLMOPT_SOCKETDATA, ce);
	curl_multi_setopt(ce->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(ce->multi, CURLMOPT_TIMERDATA, ce);
	r = sd_event_add_time(ce->event, &ce->timer, CLOCK_MONOTONIC, 0, 1000,
			      on_curl_timer_fired, ce);
	if (r >= 0)
		r = sd_event_source_set_enabled(ce->timer, SD_EVENT_OFF);
	return r;
}

void curl_event_cleanup(struct curl_event *ce)
{
	if (ce->multi)
		curl_multi_cleanup(ce->multi);
	ce->multi = NULL;
	ce->timer = sd_event_source_disable_unref(ce->timer);
}
