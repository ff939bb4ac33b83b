// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-launcher: the activation launcher alone on a bus, for buses used
 * by native kdbus clients (kdbus-proxy embeds the same module).
 *
 *   kdbus-launcher [--system|--user] [--bus=PATH] [--servicedir=DIR]...
 *                  [--timeout=MSEC] [--state-file=PATH] [--address=ADDR]
 *                  [--quiet] [--setenv=KEY=VALUE]... [--start=NAME]...
 *
 * --setenv is UpdateActivationEnvironment, --start is StartServiceByName
 * (its result is printed as "start NAME: 1|2|ERROR-NAME: message").
 *
 * SIGHUP re-reads the service files; SIGTERM/SIGINT end it (services and
 * the bus stay). Prints "ready" on stdout and sends READY=1 to
 * $NOTIFY_SOCKET once the activators exist.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "launcher.h"
#include "sd-notify.h"

static void print_start_result(void *userdata, unsigned int result, const char *error_name,
                               const char *error_message)
{
        if (result)
                printf("start %s: %u\n", (const char *)userdata, result);
        else
                printf("start %s: %s: %s\n", (const char *)userdata, error_name, error_message);
        fflush(stdout);
}

static void usage(FILE *f)
{
        fprintf(f, "usage: kdbus-launcher [--system|--user] [--bus=PATH] [--servicedir=DIR]...\n"
                   "                      [--timeout=MSEC] [--state-file=PATH] [--address=ADDR] [--quiet]\n"
                   "                      [--setenv=KEY=VALUE]... [--start=NAME]...\n");
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "system", no_argument, NULL, 's' },
                { "user", no_argument, NULL, 'u' },
                { "bus", required_argument, NULL, 'b' },
                { "servicedir", required_argument, NULL, 'd' },
                { "timeout", required_argument, NULL, 't' },
                { "state-file", required_argument, NULL, 'f' },
                { "address", required_argument, NULL, 'a' },
                { "quiet", no_argument, NULL, 'q' },
                { "setenv", required_argument, NULL, 'e' },
                { "start", required_argument, NULL, 'S' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        enum service_bus_type type = SERVICE_BUS_SYSTEM;
        const char *bus = NULL, *state_file = NULL, *address = NULL;
        char **dirs = calloc(argc + 1, sizeof(char *)), default_bus[128];
        char **starts = calloc(argc + 1, sizeof(char *));
        const char **env = calloc(2 * argc + 1, sizeof(char *));
        int nstarts = 0, nenv = 0;
        unsigned int timeout = 0;
        struct epoll_event ev;
        struct launcher *l;
        bool quiet = false;
        int ndirs = 0, c, r, sfd, epfd;
        sigset_t mask;

        if (!dirs || !starts || !env)
                return 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (c) {
                case 's': type = SERVICE_BUS_SYSTEM; break;
                case 'u': type = SERVICE_BUS_USER; break;
                case 'b': bus = optarg; break;
                case 'd': dirs[ndirs++] = optarg; break;
                case 't': timeout = strtoul(optarg, NULL, 10); break;
                case 'f': state_file = optarg; break;
                case 'a': address = optarg; break;
                case 'q': quiet = true; break;
                case 'S': starts[nstarts++] = optarg; break;
                case 'e': {
                        char *eq = strchr(optarg, '=');

                        if (!eq) {
                                usage(stderr);
                                return 2;
                        }
                        *eq = '\0';
                        env[nenv++] = optarg;
                        env[nenv++] = eq + 1;
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
        if (!bus) {
                if (type == SERVICE_BUS_SYSTEM)
                        snprintf(default_bus, sizeof(default_bus), "/sys/fs/kdbus/0-system/bus");
                else
                        snprintf(default_bus, sizeof(default_bus), "/sys/fs/kdbus/%u-user/bus",
                                 (unsigned int)getuid());
                bus = default_bus;
        }
        /* the loop owns these; SIGCHLD stays default so children can be waited for */
        sigemptyset(&mask);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

        r = launcher_new(&l, bus, type, dirs);
        free(dirs);
        if (r < 0) {
                fprintf(stderr, "kdbus-launcher: %s: %s\n", bus, strerror(-r));
                return 1;
        }
        launcher_set_verbose(l, !quiet);
        if (timeout)
                launcher_set_timeout(l, timeout);
        if (address)
                launcher_set_starter_address(l, address);
        if (state_file)
                launcher_set_state_file(l, state_file);
        r = launcher_update_environment(l, env);
        if (r < 0)
                fprintf(stderr, "kdbus-launcher: --setenv: %s\n", strerror(-r));
        free(env);

        epfd = epoll_create1(EPOLL_CLOEXEC);
        ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = sfd };
        epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev);
        ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = launcher_get_fd(l) };
        epoll_ctl(epfd, EPOLL_CTL_ADD, launcher_get_fd(l), &ev);
        printf("ready\n");
        fflush(stdout);
        sd_notify_ready();
        for (int i = 0; i < nstarts; i++) {
                r = launcher_start_service(l, starts[i], print_start_result, starts[i]);
                if (r < 0)
                        printf("start %s: %s\n", starts[i],
                               r == -ESRCH ? "org.freedesktop.DBus.Error.ServiceUnknown"
                                           : strerror(-r));
        }
        fflush(stdout);

        for (;;) {
                struct epoll_event evs[4];
                int n = epoll_wait(epfd, evs, 4, -1);

                if (n < 0 && errno != EINTR)
                        break;
                for (int i = 0; i < n; i++) {
                        if (evs[i].data.fd == sfd) {
                                struct signalfd_siginfo si;

                                while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                                        if (si.ssi_signo == SIGHUP) {
                                                r = launcher_reload(l);
                                                fprintf(stderr, "kdbus-launcher: reloaded (%s)\n",
                                                        r < 0 ? strerror(-r) : "ok");
                                                if (state_file)
                                                        launcher_set_state_file(l, state_file);
                                        } else {
                                                goto out;
                                        }
                                }
                        } else {
                                r = launcher_dispatch(l);
                                if (r < 0) {
                                        fprintf(stderr, "kdbus-launcher: %s\n", strerror(-r));
                                        goto out;
                                }
                        }
                }
        }
out:
        launcher_free(l);
        free(starts);
        if (state_file)
                unlink(state_file);
        close(epfd);
        close(sfd);
        return 0;
}
