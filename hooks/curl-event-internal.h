/* Private to hooks/: libcurl's multi interface driven by an sd-event
 * loop, so that transfers run inside the daemon's loop instead of
 * blocking it.  libcurl says which sockets to watch and when to time
 * out; this turns those into sd-event sources and hands each finished
 * transfer to the owner. */
#ifndef KFIX_HOOKS_CURL_EVENT_INTERNAL_H
#define KFIX_HOOKS_CURL_EVENT_INTERNAL_H

#include <curl/curl.h>
#include <systemd/sd-event.h>

/* Called for each finished transfer; easy is still on the multi handle,
 * the callback removes it (or has it removed) when it is done with it. */
typedef void (*curl_event_done_fn)(void *userdata, CURL *easy, CURLcode result);

struct curl_event {
	sd_event *event;	  /* not owned: the owner holds a reference */
	CURLM *multi;		  /* add easy handles here */
	sd_event_source *timer;
	curl_event_done_fn done;
	void *userdata;
};

/* Creates the multi handle and its timer on event.  Does nothing when
 * ce already has a multi handle. */
int curl_event_setup(struct curl_event *ce, sd_event *event, curl_event_done_fn done,
		     void *userdata);
void curl_event_cleanup(struct curl_event *ce);

#endif
