// The floor for a line through libevent and a Unix socket: a C libevent
// server that answers every line with a fixed state reply, writing what a
// read produced in one go (bufferevent).   floor PATH
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char reply[] = "{\"ok\":true,\"state\":\"active\",\"holding\":false,\"heldSlots\":0,\"remainingBackgroundTime\":null,\"openBackgroundTasks\":[]}\n";

static void readable(struct bufferevent *bev, void *ctx) {
    struct evbuffer *in = bufferevent_get_input(bev), *out = bufferevent_get_output(bev);
    size_t n;
    char *line;
    while ((line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF)) != NULL) {
        free(line);
        evbuffer_add(out, reply, sizeof reply - 1);
    }
}

static void event(struct bufferevent *bev, short what, void *ctx) {
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) bufferevent_free(bev);
}

static void accepted(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *a, int len, void *ctx) {
    struct bufferevent *bev = bufferevent_socket_new(evconnlistener_get_base(l), fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(bev, readable, NULL, event, NULL);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);  // a client that leaves with replies unread
    struct event_base *base = event_base_new();
    struct sockaddr_un a = {0};
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    unlink(argv[1]);
    struct evconnlistener *l = evconnlistener_new_bind(base, accepted, NULL, LEV_OPT_CLOSE_ON_FREE, 64,
                                                       (struct sockaddr *)&a, sizeof a);
    if (!l) return 1;
    event_base_dispatch(base);
    return 0;
}
