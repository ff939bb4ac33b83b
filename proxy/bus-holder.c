// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bus-holder: creates the system bus (0-system, world-accessible)
 * or the calling user's bus (<uid>-user) and keeps it for as long as it
 * runs. It holds nothing else, so the proxy and the launcher can be
 * restarted without taking the bus or its native clients down.
 *
 *   kdbus-bus-holder --system|--user [--root=DIR]
 *
 * Prints the bus node on stdout, sends READY=1 to $NOTIFY_SOCKET, and
 * exits (closing the bus) on SIGTERM or SIGINT.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus.h"
#include "sd-notify.h"


int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "system", no_argument, NULL, 's' },
                { "user", no_argument, NULL, 'u' },
                { "root", required_argument, NULL, 'r' },
                {}
        };
        const char *root = NULL;
        int mode = 0, c, r, fd, sig;
        char *path, name[64];
        sigset_t mask;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
                switch (c) {
                case 's': mode = 's'; break;
                case 'u': mode = 'u'; break;
                case 'r': root = optarg; break;
                default: mode = 0; optind = argc + 1; break;
                }
        }
        if (!mode || optind != argc) {
                fprintf(stderr, "usage: kdbus-bus-holder --system|--user [--root=DIR]\n");
                return 2;
        }
        if (mode == 's' && geteuid() != 0) {
                fprintf(stderr, "kdbus-bus-holder: the system bus 0-system needs uid 0\n");
                return 1;
        }
        /* kdbus_bus_make prefixes the creator's euid: 0-system, <uid>-user */
        snprintf(name, sizeof(name), "%s", mode == 's' ? "system" : "user");
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        r = kdbus_bus_make(root, name, mode == 's', &fd, &path);
        if (r < 0) {
                fprintf(stderr, "kdbus-bus-holder: BUS_MAKE %s: %s\n", name, strerror(-r));
                return 1;
        }
        printf("%s\n", path);
        fflush(stdout);
        sd_notify_ready();
        sigwait(&mask, &sig);
        close(fd);
        free(path);
        return 0;
}
