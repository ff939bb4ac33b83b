/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * kdbus-proxy: one epoll daemon serving D-Bus 1 clients on unix sockets
 * with one kdbus connection (a libkdbus connection in forwarding mode) per
 * client. proxy-main.c: options and the loop; proxy-listener.c: sockets
 * and credentials; proxy-sasl.c: authentication; proxy-client.c: client
 * state, framing, queues, Hello; proxy-monitor.c: BecomeMonitor; the
 * driver, match rules and message validation are libkdbus's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bus.h"
#include "proxy-sasl.h"

#define PROXY_MAX_MESSAGE       (1U << 27)
#define PROXY_OUTPUT_LIMIT      (64ULL * 1024 * 1024)
#define PROXY_STALL_TIMEOUT_SEC 300
#define PROXY_AUTH_TIMEOUT_SEC  30
#define PROXY_MAX_QUEUED_FDS    1024
/* a client's message body at least this big is read straight into a memfd */
#define PROXY_MEMFD_BODY        KDBUS_BUS_MEMFD_THRESHOLD

struct proxy_policy;
struct kdbus_match_rule;

enum proxy_watch_kind {
        WATCH_LISTENER,
        WATCH_CLIENT,
        WATCH_CLIENT_BUS,
        WATCH_SIGNAL,
        WATCH_INTERNAL,
        WATCH_CLIENT_EAVESDROP,
};

struct proxy_watch {
        enum proxy_watch_kind kind;
        void *ptr;
        int fd;
};

struct proxy_listener {
        struct proxy_watch watch;
        char *path;                     /* unlinked at exit; NULL for abstract/inherited */
};

/*
 * queued output: a referenced message's bytes, or inline bytes (SASL);
 * a memfd body follows the header bytes from its mapping (@body)
 */
struct proxy_outmsg {
        struct proxy_outmsg *next;
        struct kdbus_message *m;
        const uint8_t *ptr;
        size_t size, off;               /* @off runs over header and body */
        const uint8_t *body;
        size_t body_size;
        int *fds;
        size_t n_fds;
        uint8_t data[];
};

struct proxy_client {
        struct proxy *proxy;
        struct proxy_client *next, *prev;
        struct proxy_watch sock;        /* the unix socket */
        struct proxy_watch busw;        /* the kdbus connection */
        struct proxy_sasl sasl;
        uint32_t id;                    /* for the log */
        uid_t uid;
        gid_t gid;
        pid_t pid;
        char *seclabel;
        gid_t *groups;
        size_t n_groups;
        uint64_t accepted_ns;
        struct kdbus_bus *bus;
        bool authenticated;
        bool monitor;
        bool monitor_all;               /* a monitor without rules */
        struct kdbus_match_rule **monitor_rules;        /* select its copies of driver traffic */
        size_t n_monitor_rules;
        /* eavesdrop='true' rules of a privileged client, fed by a hidden monitor */
        struct kdbus_match_rule **eavesdrop_rules;
        size_t n_eavesdrop_rules;
        struct kdbus_bus *eavesdrop_bus;
        struct proxy_watch eavesw;
        bool dead;
        bool bus_blocked;               /* EPOLLIN of the kdbus fd removed */
        uint32_t sock_events;
        uint32_t driver_serial;
        uint8_t *in;
        size_t in_len, in_cap;
        int *in_fds;
        size_t n_in_fds;
        /*
         * a large body being read into a memfd (body_fd >= 0): c->in holds
         * its message's header (body_hlen bytes), body_map the writable
         * mapping of body_size bytes, body_len of them read
         */
        int body_fd;
        uint8_t *body_map;
        size_t body_hlen, body_size, body_len;
        struct proxy_outmsg *out_head, *out_tail;
        uint64_t out_bytes;
        uint64_t full_since_ns;
};

struct proxy {
        int epoll_fd;
        const char *bus_path;
        const char *config_file;
        struct proxy_policy *policy;
        bool system;
        uint64_t reply_timeout_usec;
        uint64_t output_limit;          /* --max-queued-bytes, per client */
        uint64_t stall_timeout_ns;      /* --stall-timeout */
        uint64_t auth_timeout_ns;       /* --auth-timeout */
        char guid[33];
        struct kdbus_bus *internal;     /* the proxy's own connection */
        struct proxy_listener *listeners;
        size_t n_listeners;
        struct proxy_client *clients;
        size_t n_clients;
        uint32_t next_client_id;
        bool quit;
};

uint64_t proxy_now_ns(void);
/* re-read --config-file; the old policy stays on failure (message in @err) */
int proxy_reload(struct proxy *p, char *err, size_t err_size);
int proxy_epoll_set(struct proxy *p, struct proxy_watch *w, uint32_t events, bool add);

/* proxy-listener.c */
int proxy_listen_address(struct proxy *p, const char *address, mode_t mode);
int proxy_listen_inherited(struct proxy *p);
void proxy_accept(struct proxy *p, struct proxy_listener *l);
void proxy_listeners_close(struct proxy *p);

/* proxy-client.c */
struct proxy_client *proxy_client_new(struct proxy *p, int fd);
void proxy_client_start(struct proxy_client *c);
void proxy_client_socket_event(struct proxy_client *c, uint32_t events);
void proxy_client_bus_event(struct proxy_client *c, uint32_t events);
void proxy_client_tick(struct proxy_client *c, uint64_t now);
void proxy_client_free(struct proxy_client *c);
void proxy_client_disconnect(struct proxy_client *c, const char *why);
int proxy_client_queue(struct proxy_client *c, struct kdbus_message *m, int *fds, size_t n_fds);
/* a copy of the driver traffic of a client for the monitors whose rules select it */
void proxy_monitors_copy(struct proxy *p, struct kdbus_message *m);
int proxy_client_reply(struct proxy_client *c, struct kdbus_message *call, const char *types, ...);
int proxy_client_reply_error(struct proxy_client *c, struct kdbus_message *call, const char *name,
                             const char *text);
int proxy_client_driver_signal(struct proxy_client *c, const char *member, const char *types, ...);
int proxy_client_open_bus(struct proxy_client *c, bool monitor, struct kdbus_bus **ret);
int proxy_client_attach_bus(struct proxy_client *c, struct kdbus_bus *bus);
void proxy_client_forward(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata);

/* queue a driver reply or signal (serial, flags and SENDER set here) */
int proxy_client_queue_driver(struct proxy_client *c, struct kdbus_message *m);

/* proxy-driver.c: 1 when the proxy answered (or will answer) the driver call */
int proxy_driver_call(struct proxy_client *c, struct kdbus_message *m);
void proxy_internal_event(struct proxy *p);

/* proxy-monitor.c */
int proxy_monitor_become(struct proxy_client *c, struct kdbus_message *call);
void proxy_monitor_free_rules(struct proxy_client *c);
/* AddMatch/RemoveMatch of an eavesdrop='true' rule (the driver still answers) */
void proxy_eavesdrop_add(struct proxy_client *c, const char *rule);
void proxy_eavesdrop_remove(struct proxy_client *c, const char *rule);
void proxy_eavesdrop_event(struct proxy_client *c, uint32_t events);
void proxy_eavesdrop_stop(struct proxy_client *c);

/* proxy-policy glue (proxy-client.c); true when allowed or no policy */
bool proxy_may_send(struct proxy_client *c, struct kdbus_message *m);
bool proxy_may_receive(struct proxy_client *c, struct kdbus_message *m);
