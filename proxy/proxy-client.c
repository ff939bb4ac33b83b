// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-proxy clients: SASL, message framing with fd queues, Hello (the
 * client's own kdbus connection with its faked identity), the client's
 * messages to the bus (validated by libkdbus's parser, the driver answered
 * by libkdbus), the bus's messages to the client (an output queue with
 * back-pressure), policy checks, and disconnection.
 */

#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "proxy.h"
#ifdef PROXY_HAVE_POLICY
#include "policy.h"
#endif

#define READ_CHUNK      65536
#define MAX_FDS_PER_MSG 253

static void close_fds(int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

struct proxy_client *proxy_client_new(struct proxy *p, int fd)
{
        struct proxy_client *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->proxy = p;
        c->sock.kind = WATCH_CLIENT;
        c->sock.ptr = c;
        c->sock.fd = fd;
        c->busw.kind = WATCH_CLIENT_BUS;
        c->busw.ptr = c;
        c->busw.fd = -1;
        c->eavesw.fd = -1;
        c->body_fd = -1;
        c->id = ++p->next_client_id;
        c->accepted_ns = proxy_now_ns();
        return c;
}

static bool may_connect(struct proxy_client *c)
{
#ifdef PROXY_HAVE_POLICY
        struct proxy_policy_peer peer = {
                .uid = c->uid, .gid = c->gid, .groups = c->groups, .n_groups = c->n_groups,
        };

        if (c->proxy->policy && !proxy_policy_may_connect(c->proxy->policy, &peer)) {
                fprintf(stderr, "kdbus-proxy: client %u (uid %u pid %d) refused by the connect policy\n",
                        c->id, (unsigned int)c->uid, (int)c->pid);
                return false;
        }
#else
        (void)c;
#endif
        return true;
}

void proxy_client_start(struct proxy_client *c)
{
        struct proxy *p = c->proxy;

        proxy_sasl_init(&c->sasl, c->uid, p->guid, !may_connect(c));
        c->next = p->clients;
        if (p->clients)
                p->clients->prev = c;
        p->clients = c;
        p->n_clients++;
        c->sock_events = EPOLLIN;
        if (proxy_epoll_set(p, &c->sock, EPOLLIN, true) < 0)
                proxy_client_disconnect(c, "epoll");
}

void proxy_client_disconnect(struct proxy_client *c, const char *why)
{
        if (c->dead)
                return;
        if (why)
                fprintf(stderr, "kdbus-proxy: client %u (uid %u pid %d%s%s): disconnected: %s\n",
                        c->id, (unsigned int)c->uid, (int)c->pid, c->bus ? " " : "",
                        c->bus ? kdbus_bus_get_unique_name(c->bus) : "", why);
        if (c->bus && (kdbus_bus_get_n_invalid(c->bus) || kdbus_bus_get_n_dropped(c->bus)))
                fprintf(stderr, "kdbus-proxy: client %u: %llu invalid messages dropped, %llu lost\n",
                        c->id, (unsigned long long)kdbus_bus_get_n_invalid(c->bus),
                        (unsigned long long)kdbus_bus_get_n_dropped(c->bus));
        c->dead = true;
        if (c->sock.fd >= 0) {
                epoll_ctl(c->proxy->epoll_fd, EPOLL_CTL_DEL, c->sock.fd, NULL);
                shutdown(c->sock.fd, SHUT_RDWR);
        }
        if (c->busw.fd >= 0) {
                epoll_ctl(c->proxy->epoll_fd, EPOLL_CTL_DEL, c->busw.fd, NULL);
                c->busw.fd = -1;
        }
}

/* drop a large body being read (its memfd and mapping) */
static void body_release(struct proxy_client *c)
{
        if (c->body_map)
                munmap(c->body_map, c->body_size);
        if (c->body_fd >= 0)
                close(c->body_fd);
        c->body_map = NULL;
        c->body_fd = -1;
        c->body_hlen = c->body_size = c->body_len = 0;
}

static void bus_close(struct proxy_client *c)
{
        if (c->busw.fd >= 0)
                epoll_ctl(c->proxy->epoll_fd, EPOLL_CTL_DEL, c->busw.fd, NULL);
        c->busw.fd = -1;
        if (c->bus) {
                kdbus_bus_set_forward(c->bus, NULL, NULL);
                kdbus_bus_unref(c->bus);
        }
        c->bus = NULL;
}

void proxy_client_free(struct proxy_client *c)
{
        struct proxy *p = c->proxy;

        bus_close(c);
        if (c->sock.fd >= 0)
                close(c->sock.fd);
        while (c->out_head) {
                struct proxy_outmsg *o = c->out_head;

                c->out_head = o->next;
                close_fds(o->fds, o->n_fds);
                free(o->fds);
                kdbus_message_unref(o->m);
                free(o);
        }
        close_fds(c->in_fds, c->n_in_fds);
        free(c->in_fds);
        body_release(c);
        free(c->in);
        free(c->seclabel);
        free(c->groups);
        proxy_monitor_free_rules(c);
        proxy_eavesdrop_stop(c);
        if (c->prev)
                c->prev->next = c->next;
        else if (p->clients == c)
                p->clients = c->next;
        if (c->next)
                c->next->prev = c->prev;
        p->n_clients--;
        free(c);
}

/* ------------------------------------------------------------------ */
/* output */

static void update_sock_events(struct proxy_client *c)
{
        uint32_t want = EPOLLIN | (c->out_head ? EPOLLOUT : 0);

        if (c->dead || want == c->sock_events)
                return;
        c->sock_events = want;
        proxy_epoll_set(c->proxy, &c->sock, want, false);
}

static void update_bus_events(struct proxy_client *c)
{
        bool block = c->out_bytes >= c->proxy->output_limit;

        if (c->dead || c->busw.fd < 0)
                return;
        if (block && !c->bus_blocked) {
                c->bus_blocked = true;
                c->full_since_ns = proxy_now_ns();
                proxy_epoll_set(c->proxy, &c->busw, 0, false);
        } else if (!block && c->bus_blocked && c->out_bytes < c->proxy->output_limit / 2) {
                c->bus_blocked = false;
                c->full_since_ns = 0;
                proxy_epoll_set(c->proxy, &c->busw, EPOLLIN, false);
        }
}

static int flush(struct proxy_client *c)
{
        while (c->out_head) {
                struct proxy_outmsg *o = c->out_head;
                size_t total = o->size + o->body_size;
                struct iovec iov[2];
                union {
                        struct cmsghdr h;
                        char buf[CMSG_SPACE(MAX_FDS_PER_MSG * sizeof(int))];
                } ctl;
                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 1 };
                ssize_t n;

                /* a memfd body is written from its mapping, never copied */
                if (o->off < o->size) {
                        iov[0] = (struct iovec){ (uint8_t *)o->ptr + o->off, o->size - o->off };
                        iov[1] = (struct iovec){ (uint8_t *)o->body, o->body_size };
                        mh.msg_iovlen = o->body_size ? 2 : 1;
                } else {
                        iov[0] = (struct iovec){ (uint8_t *)o->body + (o->off - o->size),
                                                 total - o->off };
                }

                if (o->off == 0 && o->n_fds) {
                        memset(&ctl, 0, sizeof(ctl));
                        mh.msg_control = ctl.buf;
                        mh.msg_controllen = CMSG_SPACE(o->n_fds * sizeof(int));
                        ctl.h.cmsg_level = SOL_SOCKET;
                        ctl.h.cmsg_type = SCM_RIGHTS;
                        ctl.h.cmsg_len = CMSG_LEN(o->n_fds * sizeof(int));
                        memcpy(CMSG_DATA(&ctl.h), o->fds, o->n_fds * sizeof(int));
                }
                n = sendmsg(c->sock.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        proxy_client_disconnect(c, errno == EPIPE || errno == ECONNRESET ?
                                                NULL : "write error");
                        return -errno;
                }
                if (o->n_fds) {
                        close_fds(o->fds, o->n_fds);
                        free(o->fds);
                        o->fds = NULL;
                        o->n_fds = 0;
                }
                o->off += (size_t)n;
                c->out_bytes -= (uint64_t)n;
                /* a client that reads is not stalled, however slowly it reads */
                if (c->bus_blocked && n > 0)
                        c->full_since_ns = proxy_now_ns();
                if (o->off < total)
                        break;
                c->out_head = o->next;
                if (!c->out_head)
                        c->out_tail = NULL;
                kdbus_message_unref(o->m);
                free(o);
        }
        update_sock_events(c);
        update_bus_events(c);
        return 0;
}

/* queue a sealed message (fds taken over) and try to write it */
int proxy_client_queue(struct proxy_client *c, struct kdbus_message *m, int *fds, size_t n_fds)
{
        struct kdbus_message *conv = NULL;
        struct proxy_outmsg *o;
        const void *data;
        size_t size;
        int r;

        if (c->dead) {
                close_fds(fds, n_fds);
                free(fds);
                return -ENOTCONN;
        }
        r = kdbus_message_get_data(m, &data, &size);
        if (r < 0) {
                close_fds(fds, n_fds);
                free(fds);
                return r;
        }
        (void)conv;
        o = calloc(1, sizeof(*o));
        if (!o) {
                close_fds(fds, n_fds);
                free(fds);
                proxy_client_disconnect(c, "out of memory");
                return -ENOMEM;
        }
        /* the message is not changed any more: its bytes are queued as they are */
        o->m = kdbus_message_ref(m);
        o->ptr = data;
        o->next = NULL;
        o->size = size;
        o->off = 0;
        o->fds = fds;
        o->n_fds = n_fds;
        if (kdbus_message_get_external_body(m, &data, &o->body_size, NULL) >= 0)
                o->body = data;
        if (c->out_tail)
                c->out_tail->next = o;
        else
                c->out_head = o;
        c->out_tail = o;
        c->out_bytes += size + o->body_size;
        if (c->out_head == o)
                flush(c);
        else
                update_bus_events(c);
        return 0;
}

static int queue_driver_message(struct proxy_client *c, struct kdbus_message *m)
{
        const char *dest = c->bus ? kdbus_bus_get_unique_name(c->bus) : NULL;
        int r = 0;

        if (dest && kdbus_message_get_type(m) == KDBUS_MESSAGE_SIGNAL)
                r = kdbus_message_set_destination(m, dest);
        if (++c->driver_serial == 0 || c->driver_serial == KDBUS_LOCAL_SERIAL)
                c->driver_serial = 1;
        if (r >= 0)
                r = kdbus_message_set_flags(m, kdbus_message_get_flags(m) |
                                               KDBUS_MESSAGE_NO_REPLY_EXPECTED);
        if (r >= 0)
                r = kdbus_message_seal(m, c->driver_serial, KDBUS_DRIVER_NAME);
        if (r >= 0)
                r = proxy_client_queue(c, m, NULL, 0);
        if (r >= 0 && !c->monitor)
                proxy_monitors_copy(c->proxy, m);
        return r;
}

int proxy_client_queue_driver(struct proxy_client *c, struct kdbus_message *m)
{
        return queue_driver_message(c, m);
}

int proxy_client_reply(struct proxy_client *c, struct kdbus_message *call, const char *types, ...)
{
        struct kdbus_message *m = NULL;
        va_list ap;
        int r;

        if (kdbus_message_get_flags(call) & KDBUS_MESSAGE_NO_REPLY_EXPECTED)
                return 0;
        r = kdbus_message_new_method_return(&m, call);
        if (r >= 0) {
                va_start(ap, types);
                r = kdbus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = queue_driver_message(c, m);
        kdbus_message_unref(m);
        return r;
}

int proxy_client_reply_error(struct proxy_client *c, struct kdbus_message *call, const char *name,
                             const char *text)
{
        struct kdbus_message *m = NULL;
        int r;

        if (kdbus_message_get_flags(call) & KDBUS_MESSAGE_NO_REPLY_EXPECTED)
                return 0;
        r = kdbus_message_new_error(&m, call, name, text);
        if (r >= 0)
                r = queue_driver_message(c, m);
        kdbus_message_unref(m);
        return r;
}

int proxy_client_driver_signal(struct proxy_client *c, const char *member, const char *types, ...)
{
        struct kdbus_message *m = NULL;
        va_list ap;
        int r;

        r = kdbus_message_new_signal(&m, KDBUS_DRIVER_PATH, KDBUS_DRIVER_NAME, member);
        if (r >= 0) {
                va_start(ap, types);
                r = kdbus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = queue_driver_message(c, m);
        kdbus_message_unref(m);
        return r;
}

static bool is_driver_dest(struct kdbus_message *m)
{
        const char *dest = kdbus_message_get_destination(m);

        return dest ? strcmp(dest, KDBUS_DRIVER_NAME) == 0
                    : kdbus_message_get_type(m) == KDBUS_MESSAGE_METHOD_CALL;
}

/* ------------------------------------------------------------------ */
/* policy glue */

#ifdef PROXY_HAVE_POLICY
static void policy_message(struct kdbus_message *m, struct proxy_policy_message *pm)
{
        memset(pm, 0, sizeof(*pm));
        pm->type = kdbus_message_get_type(m);
        pm->path = kdbus_message_get_path(m);
        pm->interface = kdbus_message_get_interface(m);
        pm->member = kdbus_message_get_member(m);
        pm->error_name = kdbus_message_get_error_name(m);
        pm->requested_reply = pm->type == KDBUS_MESSAGE_METHOD_RETURN ||
                              pm->type == KDBUS_MESSAGE_ERROR;
        pm->broadcast = pm->type == KDBUS_MESSAGE_SIGNAL && !kdbus_message_get_destination(m);
}

static void log_denial(struct proxy_client *c, const char *dir, struct kdbus_message *m,
                       const char *other)
{
        fprintf(stderr, "kdbus-proxy: policy: rejected %s (uid %u pid %d) %s %s: "
                "type %u interface \"%s\" member \"%s\" error name \"%s\" path \"%s\"\n",
                c->bus ? kdbus_bus_get_unique_name(c->bus) : "?", (unsigned int)c->uid,
                (int)c->pid, dir, other ? other : "(broadcast)", kdbus_message_get_type(m),
                kdbus_message_get_interface(m) ? kdbus_message_get_interface(m) : "(unset)",
                kdbus_message_get_member(m) ? kdbus_message_get_member(m) : "(unset)",
                kdbus_message_get_error_name(m) ? kdbus_message_get_error_name(m) : "(unset)",
                kdbus_message_get_path(m) ? kdbus_message_get_path(m) : "(unset)");
}
#endif

bool proxy_may_send(struct proxy_client *c, struct kdbus_message *m)
{
#ifdef PROXY_HAVE_POLICY
        struct proxy_policy_peer peer = {
                .uid = c->uid, .gid = c->gid, .groups = c->groups, .n_groups = c->n_groups,
        };
        struct proxy_policy_message pm;
        const char *dest = kdbus_message_get_destination(m);
        struct kdbus_metadata md;
        const char **names = NULL;
        char unique[32];
        bool ok;

        if (!c->proxy->policy)
                return true;
        policy_message(m, &pm);
        memset(&md, 0, sizeof(md));
        if (is_driver_dest(m)) {
                static const char *const driver[] = { KDBUS_DRIVER_NAME, NULL };

                ok = proxy_policy_may_send(c->proxy->policy, &peer, driver, &pm);
                if (!ok)
                        log_denial(c, "send to", m, KDBUS_DRIVER_NAME);
                return ok;
        }
        if (dest && kdbus_bus_get_conn_info(c->bus, dest, KDBUS_ATTACH_NAMES, &md) >= 0) {
                names = calloc(md.n_names + 3, sizeof(*names));
                if (names) {
                        size_t k = 0;

                        snprintf(unique, sizeof(unique), ":1.%llu", (unsigned long long)md.src_id);
                        names[k++] = unique;
                        for (size_t i = 0; i < md.n_names; i++)
                                names[k++] = md.names[i];
                        if (dest[0] != ':') {
                                bool found = false;

                                for (size_t i = 0; i < md.n_names; i++)
                                        found |= strcmp(md.names[i], dest) == 0;
                                if (!found)
                                        names[k++] = dest;
                        }
                }
        } else if (dest) {
                names = calloc(2, sizeof(*names));
                if (names)
                        names[0] = dest;
        }
        ok = proxy_policy_may_send(c->proxy->policy, &peer, names, &pm);
        if (!ok)
                log_denial(c, "send to", m, dest);
        free(names);
        kdbus_metadata_free(&md);
        return ok;
#else
        (void)c;
        (void)m;
        return true;
#endif
}

bool proxy_may_receive(struct proxy_client *c, struct kdbus_message *m)
{
#ifdef PROXY_HAVE_POLICY
        struct proxy_policy_peer peer = {
                .uid = c->uid, .gid = c->gid, .groups = c->groups, .n_groups = c->n_groups,
        };
        struct proxy_policy_message pm;
        const struct kdbus_metadata *md = kdbus_bus_get_current_metadata(c->bus);
        const char *sender = kdbus_message_get_sender(m);
        const char **names;
        bool ok;

        if (!c->proxy->policy || !md || !sender || strcmp(sender, KDBUS_DRIVER_NAME) == 0)
                return true;
        policy_message(m, &pm);
        names = calloc(md->n_names + 2, sizeof(*names));
        if (!names)
                return false;
        names[0] = sender;
        for (size_t i = 0; i < md->n_names; i++)
                names[i + 1] = md->names[i];
        ok = proxy_policy_may_receive(c->proxy->policy, &peer, names, &pm);
        if (!ok)
                log_denial(c, "receive from", m, sender);
        free(names);
        return ok;
#else
        (void)c;
        (void)m;
        return true;
#endif
}

/* ------------------------------------------------------------------ */
/* the bus side */

/* forwarding handler: a message the bus has for the client */
void proxy_client_forward(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct proxy_client *c = userdata;
        int *fds = NULL;
        size_t n_fds = 0;

        (void)bus;
        if (c->dead)
                return;
        kdbus_message_steal_fds(m, &fds, &n_fds);
        {
                const char *sender = kdbus_message_get_sender(m);

                /* libkdbus's driver messages: numbered by the client's driver counter */
                if (kdbus_message_get_serial(m) == KDBUS_LOCAL_SERIAL && sender &&
                    strcmp(sender, KDBUS_DRIVER_NAME) == 0) {
                        if (++c->driver_serial == 0 || c->driver_serial == KDBUS_LOCAL_SERIAL)
                                c->driver_serial = 1;
                        kdbus_message_set_serial(m, c->driver_serial);
                }
                if (!c->monitor && sender && strcmp(sender, KDBUS_DRIVER_NAME) == 0 &&
                    kdbus_message_get_destination(m))
                        proxy_monitors_copy(c->proxy, m);
        }
        if (!c->monitor && !proxy_may_receive(c, m)) {
                uint8_t type = kdbus_message_get_type(m);

                close_fds(fds, n_fds);
                free(fds);
                if (type == KDBUS_MESSAGE_METHOD_CALL &&
                    !(kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED)) {
                        struct kdbus_message *e = NULL;

                        if (kdbus_message_new_error(&e, m, "org.freedesktop.DBus.Error.AccessDenied",
                                                    "Rejected receive message by the bus security policy") >= 0)
                                kdbus_bus_send(c->bus, e, NULL);
                        kdbus_message_unref(e);
                }
                return;
        }
        proxy_client_queue(c, m, fds, n_fds);
}

static void process_bus(struct proxy_client *c)
{
        while (!c->dead && c->bus && c->out_bytes < c->proxy->output_limit) {
                int r = kdbus_bus_process(c->bus);

                if (r == 0)
                        break;
                if (r < 0 && r != -ENOMEM) {
                        if (r == -ECONNRESET || r == -ENOTCONN || r == -EBADF)
                                proxy_client_disconnect(c, "kdbus connection gone");
                        else
                                proxy_client_disconnect(c, strerror(-r));
                        break;
                }
        }
}

void proxy_client_bus_event(struct proxy_client *c, uint32_t events)
{
        if (c->dead)
                return;
        if ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN)) {
                proxy_client_disconnect(c, "kdbus connection gone");
                return;
        }
        process_bus(c);
}

int proxy_client_open_bus(struct proxy_client *c, bool monitor, struct kdbus_bus **ret)
{
        struct proxy *p = c->proxy;
        struct kdbus_bus *bus = NULL;
        char desc[32];
        int r;

        r = kdbus_bus_new(&bus);
        if (r < 0)
                return r;
        snprintf(desc, sizeof(desc), "%s-%d", monitor ? "proxy-monitor" : "proxy", (int)c->pid);
        r = kdbus_bus_set_address(bus, p->bus_path);
        if (r >= 0)
                r = kdbus_bus_set_description(bus, desc);
        if (r >= 0)
                r = kdbus_bus_set_accept_fd(bus, c->sasl.unix_fd);
        if (r >= 0)
                r = kdbus_bus_set_external_bodies(bus, true);
        if (r >= 0)
                r = kdbus_bus_set_attach_recv(bus, KDBUS_ATTACH_NAMES | KDBUS_ATTACH_CREDS |
                                                   KDBUS_ATTACH_PIDS | KDBUS_ATTACH_SECLABEL);
        if (r >= 0)
                r = kdbus_bus_set_monitor(bus, monitor);
        if (r >= 0)
                r = kdbus_bus_set_name_signals(bus, !monitor);
        if (r >= 0)
                r = kdbus_bus_set_faked_identity(bus, c->uid, c->gid, (uint32_t)c->pid, c->seclabel);
        if (r >= 0)
                r = kdbus_bus_set_default_timeout(bus, p->reply_timeout_usec);
        if (r >= 0)
                r = kdbus_bus_set_forward(bus, proxy_client_forward, c);
        if (r >= 0)
                r = kdbus_bus_start(bus);
        if (r < 0) {
                kdbus_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

int proxy_client_attach_bus(struct proxy_client *c, struct kdbus_bus *bus)
{
        bus_close(c);
        c->bus = bus;
        c->busw.fd = kdbus_bus_get_fd(bus);
        c->bus_blocked = false;
        return proxy_epoll_set(c->proxy, &c->busw, EPOLLIN, true);
}

static int hello(struct proxy_client *c, struct kdbus_message *m)
{
        struct kdbus_bus *bus = NULL;
        const char *unique;
        int r;

        r = proxy_client_open_bus(c, false, &bus);
        if (r < 0) {
                fprintf(stderr, "kdbus-proxy: client %u (uid %u pid %d): HELLO: %s\n", c->id,
                        (unsigned int)c->uid, (int)c->pid, strerror(-r));
                return r;
        }
        r = proxy_client_attach_bus(c, bus);
        if (r < 0)
                return r;
        unique = kdbus_bus_get_unique_name(bus);
        r = kdbus_message_set_sender(m, unique);
        if (r >= 0)
                proxy_monitors_copy(c->proxy, m);
        if (r >= 0) {
                /* Hello is answered even with NO_REPLY_EXPECTED (dbus-daemon) */
                struct kdbus_message *reply = NULL;

                r = kdbus_message_new_method_return(&reply, m);
                if (r >= 0)
                        r = kdbus_message_append(reply, "s", unique);
                if (r >= 0)
                        r = queue_driver_message(c, reply);
                kdbus_message_unref(reply);
        }
        if (r >= 0)
                r = proxy_client_driver_signal(c, "NameAcquired", "s", unique);
        return r;
}

/* ------------------------------------------------------------------ */
/* the client side */


static int handle_message(struct proxy_client *c, struct kdbus_message *m)
{
        uint8_t type = kdbus_message_get_type(m);
        const char *iface = kdbus_message_get_interface(m);
        const char *member = kdbus_message_get_member(m);
        int r;

        if (type < KDBUS_MESSAGE_METHOD_CALL || type > KDBUS_MESSAGE_SIGNAL)
                return 0;
        if (!c->bus) {
                if (type != KDBUS_MESSAGE_METHOD_CALL || !is_driver_dest(m) ||
                    !member || strcmp(member, "Hello") != 0 ||
                    (iface && strcmp(iface, KDBUS_DRIVER_NAME) != 0)) {
                        if (type != KDBUS_MESSAGE_METHOD_CALL)
                                return 0;
                        return proxy_client_reply_error(c, m, "org.freedesktop.DBus.Error.AccessDenied",
                                                        "Client tried to send a message other than Hello without being registered");
                }
                return hello(c, m);
        }
        if (c->monitor)
                return -EPROTO;         /* monitors may not send (dbus-daemon) */
        if (type == KDBUS_MESSAGE_METHOD_CALL && is_driver_dest(m) && member && iface &&
            strcmp(iface, "org.freedesktop.DBus.Monitoring") == 0 &&
            strcmp(member, "BecomeMonitor") == 0)
                return proxy_monitor_become(c, m);
        if (type == KDBUS_MESSAGE_METHOD_CALL && is_driver_dest(m) && member &&
            strcmp(member, "ReloadConfig") == 0 && (!iface || strcmp(iface, KDBUS_DRIVER_NAME) == 0) &&
            !strcmp(kdbus_message_get_signature(m), "") && (c->uid == 0 || c->uid == geteuid())) {
                char err[512] = "";

                r = kdbus_message_set_sender(m, kdbus_bus_get_unique_name(c->bus));
                if (r < 0)
                        return r;
                if (proxy_reload(c->proxy, err, sizeof(err)) < 0)
                        return proxy_client_reply_error(c, m, "org.freedesktop.DBus.Error.Failed", err);
                return proxy_client_reply(c, m, "");
        }
#ifdef PROXY_HAVE_POLICY
        if (type == KDBUS_MESSAGE_METHOD_CALL && is_driver_dest(m) && member &&
            strcmp(member, "RequestName") == 0 && c->proxy->policy &&
            !strcmp(kdbus_message_get_signature(m), "su")) {
                struct proxy_policy_peer peer = {
                        .uid = c->uid, .gid = c->gid, .groups = c->groups,
                        .n_groups = c->n_groups,
                };
                const char *name = NULL;

                kdbus_message_rewind(m);
                if (kdbus_message_read_basic(m, 's', &name) > 0 && name[0] != ':' &&
                    strcmp(name, KDBUS_DRIVER_NAME) != 0 &&
                    !proxy_policy_may_own(c->proxy->policy, &peer, name)) {
                        char text[768];

                        snprintf(text, sizeof(text),
                                 "Connection \"%s\" is not allowed to own the service \"%s\" due to security policies in the configuration file",
                                 kdbus_bus_get_unique_name(c->bus), name);
                        /* rewrites the message: @name is not used after this */
                        r = kdbus_message_set_sender(m, kdbus_bus_get_unique_name(c->bus));
                        if (r < 0)
                                return r;
                        fprintf(stderr, "kdbus-proxy: policy: %s\n", text);
                        return proxy_client_reply_error(c, m, "org.freedesktop.DBus.Error.AccessDenied",
                                                        text);
                }
                kdbus_message_rewind(m);
        }
#endif
        if (!proxy_may_send(c, m)) {
                r = kdbus_message_set_sender(m, kdbus_bus_get_unique_name(c->bus));
                if (r >= 0 && type == KDBUS_MESSAGE_METHOD_CALL) {
                        char text[1024];

                        /* the header was rewritten: fetch the strings again */
                        iface = kdbus_message_get_interface(m);
                        member = kdbus_message_get_member(m);
                        snprintf(text, sizeof(text),
                                 "Rejected send message, %zu matched rules; type=\"method_call\", "
                                 "sender=\"%s\" (uid=%u pid=%d) interface=\"%s\" member=\"%s\" "
                                 "error name=\"(unset)\" requested_reply=\"0\" destination=\"%s\"",
                                 (size_t)1, kdbus_bus_get_unique_name(c->bus),
                                 (unsigned int)c->uid, (int)c->pid, iface ? iface : "(unset)",
                                 member ? member : "(unset)",
                                 kdbus_message_get_destination(m) ?
                                 kdbus_message_get_destination(m) : KDBUS_DRIVER_NAME);
                        proxy_client_reply_error(c, m, "org.freedesktop.DBus.Error.AccessDenied",
                                                 text);
                }
                return 0;
        }
        if (is_driver_dest(m) && type == KDBUS_MESSAGE_METHOD_CALL) {
                /* SENDER first, so that the copy carries it */
                r = kdbus_message_set_sender(m, kdbus_bus_get_unique_name(c->bus));
                if (r < 0)
                        return r;
                proxy_monitors_copy(c->proxy, m);
                r = proxy_driver_call(c, m);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = kdbus_bus_forward_send(c->bus, m);
        if (r == -ECONNRESET || r == -ENOTCONN)
                return r;
        return 0;
}

/* drop the first @size bytes of the input; a big buffer is given back at once */
static void consume_input(struct proxy_client *c, size_t size)
{
        size_t rest = c->in_len - size;

        if (c->in_cap > 4 * READ_CHUNK && rest <= READ_CHUNK) {
                uint8_t *n = malloc(READ_CHUNK);

                if (n) {
                        memcpy(n, c->in + size, rest);
                        free(c->in);
                        c->in = n;
                        c->in_cap = READ_CHUNK;
                        c->in_len = rest;
                        return;
                }
        }
        memmove(c->in, c->in + size, rest);
        c->in_len = rest;
}

/* a parsed message of the client (unreferenced here): its descriptors, then on */
static int take_parsed(struct proxy_client *c, struct kdbus_message *m)
{
        struct kdbus_message *conv = NULL;
        uint32_t n_fds;
        int r;

        n_fds = kdbus_message_get_unix_fds(m);
        if (n_fds > c->n_in_fds) {
                kdbus_message_unref(m);
                return -EBADF;
        }
        if (kdbus_message_get_endian(m) != 'l') {
                r = kdbus_message_convert(&conv, m, 'l');
                kdbus_message_unref(m);
                if (r < 0)
                        return r;
                m = conv;
        }
        if (n_fds) {
                r = kdbus_message_attach_fds(m, c->in_fds, n_fds);
                if (r < 0) {
                        kdbus_message_unref(m);
                        return r;
                }
                c->n_in_fds -= n_fds;
                memmove(c->in_fds, c->in_fds + n_fds, c->n_in_fds * sizeof(int));
        }
        r = handle_message(c, m);
        kdbus_message_unref(m);
        return r;
}

/* one complete message of @size bytes at c->in, consumed here */
static int take_message(struct proxy_client *c, size_t size)
{
        struct kdbus_message *m = NULL;
        int r;

        r = kdbus_message_parse(&m, c->in, size);
        /* the parsed message has its own copy: never hold big bodies twice */
        consume_input(c, size);
        if (r < 0)
                return r;
        return take_parsed(c, m);
}

/*
 * The message at c->in (@hlen bytes of header, @total in all) has a large
 * body: it is read from the socket straight into a memfd's mapping, over
 * as many wake-ups as it takes (read_input), and sent as that memfd.
 */
static int body_start(struct proxy_client *c, size_t hlen, size_t total)
{
        size_t size = total - hlen, have = c->in_len - hlen;
        void *map;
        int fd;

        fd = memfd_create("kdbus-proxy-body", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t)size) < 0) {
                close(fd);
                return -ENOMEM;
        }
        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
                close(fd);
                return -ENOMEM;
        }
        c->body_fd = fd;
        c->body_map = map;
        c->body_size = size;
        c->body_hlen = hlen;
        memcpy(c->body_map, c->in + hlen, have);
        c->body_len = have;
        c->in_len = hlen;
        return 0;
}

/* a memfd-body message as a contiguous one: the driver reads its arguments */
static int make_contiguous(struct kdbus_message **m)
{
        struct kdbus_message *n = NULL;
        const void *header, *body;
        size_t hlen, blen;
        uint8_t *buf;
        int r;

        if (kdbus_message_get_data(*m, &header, &hlen) < 0 ||
            kdbus_message_get_external_body(*m, &body, &blen, NULL) < 0)
                return -EINVAL;
        buf = malloc(hlen + blen);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, header, hlen);
        memcpy(buf + hlen, body, blen);
        r = kdbus_message_parse(&n, buf, hlen + blen);
        free(buf);
        kdbus_message_unref(*m);
        *m = n;
        return r;
}

/* the body is complete: seal it, validate the message and hand it on */
static int body_finish(struct proxy_client *c)
{
        struct kdbus_message *m = NULL;
        int r;

        /* no writable mapping may remain for F_SEAL_WRITE */
        munmap(c->body_map, c->body_size);
        c->body_map = NULL;
        if (fcntl(c->body_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                r = -errno;
        else
                r = kdbus_message_parse_external(&m, c->in, c->body_hlen, c->body_fd, 0,
                                                 c->body_size);
        if (r >= 0)
                c->body_fd = -1;        /* the message owns it now */
        if (r >= 0 && is_driver_dest(m))
                r = make_contiguous(&m);
        consume_input(c, c->body_hlen);
        body_release(c);
        if (r < 0) {
                kdbus_message_unref(m);
                return r;
        }
        return take_parsed(c, m);
}

/* a message the proxy cannot take: drop the client, say why */
static int disconnect_invalid(struct proxy_client *c, int r)
{
        char why[96];

        snprintf(why, sizeof(why), "invalid message (%s)", strerror(-r));
        proxy_client_disconnect(c, why);
        return r;
}

static int process_input(struct proxy_client *c)
{
        size_t off = 0;
        int r = 0;

        if (c->body_map) {
                if (c->body_len < c->body_size)
                        goto out;
                r = body_finish(c);
                if (r < 0)
                        return disconnect_invalid(c, r);
                if (c->bus)
                        process_bus(c);
        }
        while (!c->dead && off < c->in_len) {
                if (!c->authenticated) {
                        char reply[160];
                        size_t used;

                        r = proxy_sasl_feed(&c->sasl, (char *)c->in + off, c->in_len - off, &used,
                                            reply, sizeof(reply));
                        if (r < 0) {
                                proxy_client_disconnect(c, r == -EACCES ? "authentication failed"
                                                                        : "SASL protocol violation");
                                return r;
                        }
                        if (r == 0)
                                break;
                        off += used;
                        if (reply[0]) {
                                /* SASL replies are tiny: straight to the socket queue */
                                struct proxy_outmsg *o = malloc(sizeof(*o) + strlen(reply));

                                if (!o)
                                        return -ENOMEM;
                                memset(o, 0, sizeof(*o));
                                o->size = strlen(reply);
                                memcpy(o->data, reply, o->size);
                                o->ptr = o->data;
                                if (c->out_tail)
                                        c->out_tail->next = o;
                                else
                                        c->out_head = o;
                                c->out_tail = o;
                                c->out_bytes += o->size;
                        }
                        if (r == 2)
                                c->authenticated = true;
                        continue;
                }
                {
                        size_t total, hlen, need;
                        uint32_t fields_len;

                        if (c->in_len - off < KDBUS_MESSAGE_HEADER_SIZE)
                                break;
                        r = kdbus_message_peek_size(c->in + off, c->in_len - off, &total);
                        if (r < 0 || total > PROXY_MAX_MESSAGE) {
                                proxy_client_disconnect(c, "malformed message header");
                                return -EBADMSG;
                        }
                        memcpy(&fields_len, c->in + off + 12, 4);
                        hlen = (KDBUS_MESSAGE_HEADER_SIZE + (size_t)le32toh(fields_len) + 7) & ~(size_t)7;
                        need = total;
                        if (c->in_len - off < total) {
                                /* make room for the whole message */
                                if (off) {
                                        memmove(c->in, c->in + off, c->in_len - off);
                                        c->in_len -= off;
                                        off = 0;
                                }
                                /* a large body goes to a memfd: room for the header only */
                                if (c->in[0] == 'l' && total - hlen >= PROXY_MEMFD_BODY) {
                                        if (c->in_len >= hlen) {
                                                r = body_start(c, hlen, total);
                                                if (r < 0) {
                                                        proxy_client_disconnect(c, strerror(-r));
                                                        return r;
                                                }
                                                break;
                                        }
                                        need = hlen;
                                }
                                if (c->in_cap < need) {
                                        uint8_t *n = realloc(c->in, need);

                                        if (!n) {
                                                proxy_client_disconnect(c, "out of memory");
                                                return -ENOMEM;
                                        }
                                        c->in = n;
                                        c->in_cap = need;
                                }
                                break;
                        }
                        if (off) {
                                memmove(c->in, c->in + off, c->in_len - off);
                                c->in_len -= off;
                                off = 0;
                        }
                        r = take_message(c, total);
                        if (r < 0)
                                return disconnect_invalid(c, r);
                        if (c->bus)
                                process_bus(c);
                }
        }
        if (off) {
                memmove(c->in, c->in + off, c->in_len - off);
                c->in_len -= off;
        }
out:
        if (c->authenticated && !c->sasl.unix_fd && c->n_in_fds) {
                proxy_client_disconnect(c, "fds without NEGOTIATE_UNIX_FD");
                return -EPROTO;
        }
        if (!c->dead)
                flush(c);
        return 0;
}

static int read_input(struct proxy_client *c)
{
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(MAX_FDS_PER_MSG * sizeof(int))];
        } ctl;
        struct msghdr mh;
        struct iovec iov;
        ssize_t n;

        if (c->body_map) {
                /* a large body: straight into its memfd */
                iov.iov_base = c->body_map + c->body_len;
                iov.iov_len = c->body_size - c->body_len;
        } else if (c->in_cap - c->in_len < 4096) {
                size_t cap = c->in_len + (c->in_cap ? READ_CHUNK : 4096);
                uint8_t *p;

                p = realloc(c->in, cap);
                if (!p)
                        return -ENOMEM;
                c->in = p;
                c->in_cap = cap;
        }
        if (!c->body_map) {
                iov.iov_base = c->in + c->in_len;
                iov.iov_len = c->in_cap - c->in_len;
        }
        if (!c->authenticated && iov.iov_len > 256)
                iov.iov_len = 256;      /* stop reading messages with BEGIN pending */
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof(ctl.buf);
        n = recvmsg(c->sock.fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
                if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
                        size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        int *fds = (int *)CMSG_DATA(h);
                        int *q;

                        q = realloc(c->in_fds, (c->n_in_fds + k) * sizeof(int));
                        if (!q || !c->sasl.unix_fd || !c->authenticated ||
                            c->n_in_fds + k > PROXY_MAX_QUEUED_FDS) {
                                if (q)
                                        c->in_fds = q;
                                close_fds(fds, k);
                                return -EPROTO;
                        }
                        c->in_fds = q;
                        memcpy(c->in_fds + c->n_in_fds, fds, k * sizeof(int));
                        c->n_in_fds += k;
                }
        }
        if (mh.msg_flags & MSG_CTRUNC)
                return -EPROTO;
        if (n == 0)
                return -ECONNRESET;
        if (c->body_map)
                c->body_len += (size_t)n;
        else
                c->in_len += (size_t)n;
        return 1;
}

void proxy_client_socket_event(struct proxy_client *c, uint32_t events)
{
        if (c->dead)
                return;
        if (events & EPOLLOUT) {
                flush(c);
                /* the queue drained: what waited on the kdbus side comes now */
                if (!c->dead && c->bus && !c->bus_blocked)
                        process_bus(c);
        }
        if (c->dead)
                return;
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                for (int i = 0; i < 16 && !c->dead; i++) {
                        int r = read_input(c);

                        if (r < 0) {
                                proxy_client_disconnect(c, r == -ECONNRESET ? NULL :
                                                        r == -EPROTO ? "file descriptors not negotiated" :
                                                        strerror(-r));
                                return;
                        }
                        if (r == 0)
                                break;
                        process_input(c);
                }
        }
}

void proxy_client_tick(struct proxy_client *c, uint64_t now)
{
        if (c->dead)
                return;
        if (!c->authenticated && now - c->accepted_ns > c->proxy->auth_timeout_ns) {
                proxy_client_disconnect(c, "authentication timed out");
                return;
        }
        if (c->bus_blocked && c->full_since_ns &&
            now - c->full_since_ns > c->proxy->stall_timeout_ns)
                proxy_client_disconnect(c, "not reading its messages");
}
