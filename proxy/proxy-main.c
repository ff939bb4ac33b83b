// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-proxy(8): D-Bus 1 clients on a kdbus bus. Options, the epoll loop,
 * signals (SIGTERM/SIGINT quit, SIGHUP reloads the policy), readiness.
 *
 *   kdbus-proxy [--system|--user] [--bus=PATH] [--address=ADDR]...
 *               [--config-file=FILE] [--reply-timeout=SEC] [--auth-timeout=SEC]
 *               [--max-queued-bytes=BYTES] [--stall-timeout=SEC]
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "proxy.h"
#include "sd-notify.h"
#ifdef PROXY_HAVE_POLICY
#include "policy.h"
#endif

uint64_t proxy_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int proxy_epoll_set(struct proxy *p, struct proxy_watch *w, uint32_t events, bool add)
{
        struct epoll_event ev = { .events = events, .data.ptr = w };

        if (epoll_ctl(p->epoll_fd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, w->fd, &ev) < 0)
                return -errno;
        return 0;
}

int proxy_reload(struct proxy *p, char *err, size_t err_size)
{
        err[0] = 0;
        if (!p->config_file)
                return 0;
#ifdef PROXY_HAVE_POLICY
        {
                struct proxy_policy *pol = NULL;
                int r;

                r = proxy_policy_load(&pol, p->config_file, err, err_size);
                if (r < 0) {
                        if (!err[0])
                                snprintf(err, err_size, "%s", strerror(-r));
                        fprintf(stderr, "kdbus-proxy: %s: %s\n", p->config_file, err);
                        return r;
                }
                proxy_policy_free(p->policy);
                p->policy = pol;
                return 0;
        }
#else
        snprintf(err, err_size, "--config-file: this kdbus-proxy was built without the XML "
                 "policy (proxy/policy.c)");
        fprintf(stderr, "kdbus-proxy: %s\n", err);
        return -EOPNOTSUPP;
#endif
}

static int load_policy(struct proxy *p)
{
        char err[512];

        return proxy_reload(p, err, sizeof(err));
}

static void usage(FILE *f)
{
        fprintf(f, "usage: kdbus-proxy [--system|--user] [--bus=PATH] [--address=unix:path=SOCKET]...\n"
                "                   [--config-file=FILE] [--reply-timeout=SEC] [--auth-timeout=SEC]\n"
                "                   [--max-queued-bytes=BYTES] [--stall-timeout=SEC]\n");
}

static void raise_nofile(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "system", no_argument, NULL, 's' },
                { "user", no_argument, NULL, 'u' },
                { "bus", required_argument, NULL, 'b' },
                { "address", required_argument, NULL, 'a' },
                { "config-file", required_argument, NULL, 'c' },
                { "no-activation", no_argument, NULL, 'n' },
                { "systemd-activation", no_argument, NULL, 'S' },
                { "reply-timeout", required_argument, NULL, 't' },
                { "max-queued-bytes", required_argument, NULL, 'q' },
                { "stall-timeout", required_argument, NULL, 'T' },
                { "auth-timeout", required_argument, NULL, 'A' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        struct proxy p = {
                .epoll_fd = -1,
                .reply_timeout_usec = 1800ULL * 1000000,
                .output_limit = PROXY_OUTPUT_LIMIT,
                .stall_timeout_ns = PROXY_STALL_TIMEOUT_SEC * 1000000000ULL,
                .auth_timeout_ns = PROXY_AUTH_TIMEOUT_SEC * 1000000000ULL,
        };
        struct proxy_watch internalw = { .kind = WATCH_INTERNAL };
        const char **addresses = NULL;
        size_t n_addresses = 0;
        char *bus_default = NULL, *addr_default = NULL;
        struct proxy_watch sigw = { .kind = WATCH_SIGNAL };
        bool user = false;
        sigset_t mask;
        int c, r, ret = 1;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (c) {
                case 's': p.system = true; user = false; break;
                case 'u': user = true; p.system = false; break;
                case 'b': p.bus_path = optarg; break;
                case 'a': {
                        const char **v = realloc(addresses, (n_addresses + 1) * sizeof(*v));

                        if (!v)
                                return 1;
                        addresses = v;
                        addresses[n_addresses++] = optarg;
                        break;
                }
                case 'c': p.config_file = optarg; break;
                case 'n': case 'S':
                        /* refused rather than ignored: nothing here would act on them */
                        fprintf(stderr, "kdbus-proxy: --%s is not supported: the proxy has no launcher "
                                "of its own; services are started by kdbus-launcher, which the "
                                "proxy's StartServiceByName and its clients' calls reach through "
                                "the activators\n", c == 'n' ? "no-activation" : "systemd-activation");
                        return 2;
                case 't': {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);

                        if (*end || !*optarg || v == 0 || v > 86400 * 365) {
                                fprintf(stderr, "kdbus-proxy: bad --reply-timeout\n");
                                return 2;
                        }
                        p.reply_timeout_usec = v * 1000000ULL;
                        break;
                }
                case 'A': {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);

                        if (*end || !*optarg || v == 0 || v > 86400) {
                                fprintf(stderr, "kdbus-proxy: bad --auth-timeout\n");
                                return 2;
                        }
                        p.auth_timeout_ns = v * 1000000000ULL;
                        break;
                }
                case 'q': case 'T': {
                        char *end;
                        unsigned long long v = strtoull(optarg, &end, 10);

                        /* bytes at least 64 KiB (a message must fit), seconds up to a day */
                        if (*end || !*optarg || (c == 'q' && (v < 65536 || v > (1ULL << 40))) ||
                            (c == 'T' && (v == 0 || v > 86400))) {
                                fprintf(stderr, "kdbus-proxy: bad --%s\n",
                                        c == 'q' ? "max-queued-bytes" : "stall-timeout");
                                return 2;
                        }
                        if (c == 'q')
                                p.output_limit = v;
                        else
                                p.stall_timeout_ns = v * 1000000000ULL;
                        break;
                }
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind != argc) {
                usage(stderr);
                return 2;
        }
        if (!p.bus_path) {
                if (user) {
                        if (asprintf(&bus_default, "%s/%u-user/bus", KDBUS_BUS_DEFAULT_ROOT,
                                     (unsigned int)getuid()) < 0)
                                return 1;
                } else {
                        bus_default = strdup(KDBUS_BUS_DEFAULT_ROOT "/0-system/bus");
                }
                p.bus_path = bus_default;
        }

        raise_nofile();
        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        if (load_policy(&p) < 0)
                goto out;

        /* the proxy's own connection: checks the bus, gives the SASL GUID */
        r = kdbus_bus_open(&p.internal, p.bus_path);
        if (r < 0) {
                fprintf(stderr, "kdbus-proxy: %s: %s\n", p.bus_path, strerror(-r));
                goto out;
        }
        kdbus_bus_get_bus_id(p.internal, p.guid);

        p.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (p.epoll_fd < 0)
                goto out;

        r = proxy_listen_inherited(&p);
        if (r < 0)
                goto out;
        if (r == 0) {
                if (n_addresses == 0) {
                        const char *rt = getenv("XDG_RUNTIME_DIR");

                        if (user && !rt) {
                                fprintf(stderr, "kdbus-proxy: --user needs $XDG_RUNTIME_DIR or --address\n");
                                goto out;
                        }
                        if (user)
                                r = asprintf(&addr_default, "unix:path=%s/bus", rt);
                        else
                                r = asprintf(&addr_default, "unix:path=/run/dbus/system_bus_socket");
                        if (r < 0)
                                goto out;
                }
                for (size_t i = 0; i < (n_addresses ? n_addresses : 1); i++) {
                        const char *a = n_addresses ? addresses[i] : addr_default;

                        r = proxy_listen_address(&p, a, user ? 0600 : 0666);
                        if (r < 0) {
                                fprintf(stderr, "kdbus-proxy: listen on %s: %s\n", a, strerror(-r));
                                goto out;
                        }
                }
        }
        for (size_t i = 0; i < p.n_listeners; i++) {
                p.listeners[i].watch.ptr = &p.listeners[i];
                if (proxy_epoll_set(&p, &p.listeners[i].watch, EPOLLIN, true) < 0)
                        goto out;
        }
        /* the internal connection's replies: StartServiceByName's pings */
        internalw.fd = kdbus_bus_get_fd(p.internal);
        if (proxy_epoll_set(&p, &internalw, EPOLLIN, true) < 0)
                goto out;
        sigw.fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigw.fd < 0 || proxy_epoll_set(&p, &sigw, EPOLLIN, true) < 0)
                goto out;

        fprintf(stderr, "kdbus-proxy: serving %s (bus id %s)\n", p.bus_path, p.guid);
        sd_notify_ready();

        while (!p.quit) {
                struct epoll_event ev[64];
                int n = epoll_wait(p.epoll_fd, ev, 64, 1000);
                uint64_t now;

                if (n < 0 && errno != EINTR) {
                        fprintf(stderr, "kdbus-proxy: epoll_wait: %m\n");
                        break;
                }
                for (int i = 0; i < n; i++) {
                        struct proxy_watch *w = ev[i].data.ptr;

                        switch (w->kind) {
                        case WATCH_LISTENER:
                                proxy_accept(&p, w->ptr);
                                break;
                        case WATCH_CLIENT:
                                proxy_client_socket_event(w->ptr, ev[i].events);
                                break;
                        case WATCH_CLIENT_BUS:
                                proxy_client_bus_event(w->ptr, ev[i].events);
                                break;
                        case WATCH_CLIENT_EAVESDROP:
                                proxy_eavesdrop_event(w->ptr, ev[i].events);
                                break;
                        case WATCH_INTERNAL:
                                proxy_internal_event(&p);
                                break;
                        case WATCH_SIGNAL: {
                                struct signalfd_siginfo si;

                                while (read(sigw.fd, &si, sizeof(si)) == sizeof(si)) {
                                        if (si.ssi_signo == SIGHUP) {
                                                fprintf(stderr, "kdbus-proxy: reloading the configuration\n");
                                                load_policy(&p);
                                        } else {
                                                p.quit = true;
                                        }
                                }
                                break;
                        }
                        }
                }
                now = proxy_now_ns();
                for (struct proxy_client *cl = p.clients, *next; cl; cl = next) {
                        next = cl->next;
                        proxy_client_tick(cl, now);
                        if (cl->dead)
                                proxy_client_free(cl);
                }
        }
        ret = 0;
        fprintf(stderr, "kdbus-proxy: exiting\n");
out:
        while (p.clients)
                proxy_client_free(p.clients);
        proxy_listeners_close(&p);
        if (sigw.fd > 0)
                close(sigw.fd);
        if (p.epoll_fd >= 0)
                close(p.epoll_fd);
        kdbus_bus_unref(p.internal);
#ifdef PROXY_HAVE_POLICY
        proxy_policy_free(p.policy);
#endif
        free(addresses);
        free(bus_default);
        free(addr_default);
        return ret;
}
