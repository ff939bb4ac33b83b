// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dbus-broker-controller: runs Debian's dbus-broker without its launcher
 * (dbus-broker-launch needs systemd) for the benchmark comparison.
 *
 *   dbus-broker-controller --address=unix:path=SOCK [--broker=PATH]
 *                          [--machine-id=HEX32] [--verbose]
 *
 * Starts `dbus-broker --controller 3` on one end of a socketpair and is
 * the controller on the other: a D-Bus peer (SASL EXTERNAL as the client,
 * unix fds negotiated, no Hello) that calls
 *
 *   /org/bus1/DBus/Broker org.bus1.DBus.Broker.AddListener(o path, h socket, v policy)
 *
 * with a listening unix socket bound at SOCK and a policy that allows
 * everything (connect, own, send and receive for every uid). Prints
 * "ready" on stdout once clients can connect; runs in the foreground and
 * exits, killing the broker and removing SOCK, on SIGTERM or SIGINT, or
 * when the broker goes away. ReloadConfig from the broker (a client asked
 * for it) is answered with success, as there is nothing to reload; other
 * calls with an error.
 *
 * Messages are built and parsed with libkdbus's D-Bus 1 marshaller
 * (lib/message.h), framed by test/proxy/dbus1.h.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbus1.h"
#include "message.h"

#define BROKER_PATH      "/org/bus1/DBus/Broker"
#define BROKER_INTERFACE "org.bus1.DBus.Broker"
#define LISTENER_PATH    "/org/bus1/DBus/Listener/0"

/*
 * The policy variant of dbus-broker's launcher (src/launcher/policy.c):
 * a batch is (connect verdict b + t priority, own rules
 * a(b verdict, t priority, b prefix, s name), send and receive rules
 * a(b verdict, t priority, s name, s path, s interface, s member, u type,
 * u broadcast, t min_fds, t max_fds)); the policy is the per-uid batches
 * a(u uid, batch) (uid (uint32_t)-1: the default), the uid range batches
 * a(b, u first, u last, batch), SELinux names a(ss), b AppArmor, s bus
 * type. Found by trial against dbus-broker 33: a verdict true allows (a
 * false connect verdict makes the broker close new connections at once),
 * empty strings and type 0 match everything, and an own rule with prefix
 * true and name "" matches every name.
 */
#define ALLOW true
#define POLICY_BATCH "(bta(btbs)a(btssssuutt)a(btssssuutt))"
#define POLICY_SIG   "(a(u" POLICY_BATCH ")a(buu" POLICY_BATCH ")a(ss)bs)"

static bool verbose;

static void usage(void)
{
        fprintf(stderr, "usage: dbus-broker-controller --address=unix:path=SOCK "
                        "[--broker=PATH] [--machine-id=HEX32] [--verbose]\n");
}

/* the allow-everything batch */
static int append_batch(struct kdbus_message *m)
{
        return kdbus_message_append(m, POLICY_BATCH,
                                    ALLOW, (uint64_t)1,
                                    1u, ALLOW, (uint64_t)1, true, "",
                                    1u, ALLOW, (uint64_t)1, "", "", "", "", 0u, 0u,
                                    (uint64_t)0, UINT64_MAX,
                                    1u, ALLOW, (uint64_t)1, "", "", "", "", 0u, 0u,
                                    (uint64_t)0, UINT64_MAX);
}

static int add_listener(struct d1 *c, int listen_fd)
{
        struct kdbus_message *m = NULL, *reply = NULL;
        uint64_t deadline;
        uint32_t serial;
        int r;

        r = kdbus_message_new_method_call(&m, NULL, BROKER_PATH, BROKER_INTERFACE, "AddListener");
        if (r < 0)
                return r;
        r = kdbus_message_append(m, "oh", LISTENER_PATH, listen_fd);
        if (r >= 0)
                r = kdbus_message_open_container(m, 'v', POLICY_SIG);
        if (r >= 0)
                r = kdbus_message_open_container(m, '(', "a(u" POLICY_BATCH ")a(buu" POLICY_BATCH ")a(ss)bs");
        if (r >= 0)
                r = kdbus_message_open_container(m, 'a', "(u" POLICY_BATCH ")");
        if (r >= 0)
                r = kdbus_message_open_container(m, '(', "u" POLICY_BATCH);
        if (r >= 0)
                r = kdbus_message_append(m, "u", (uint32_t)-1);
        if (r >= 0)
                r = append_batch(m);
        if (r >= 0)
                r = kdbus_message_close_container(m);   /* (u batch) */
        if (r >= 0)
                r = kdbus_message_close_container(m);   /* a(u batch) */
        if (r >= 0)
                r = kdbus_message_append(m, "a(buu" POLICY_BATCH ")a(ss)bs", 0u, 0u, false, "");
        if (r >= 0)
                r = kdbus_message_close_container(m);   /* policy struct */
        if (r >= 0)
                r = kdbus_message_close_container(m);   /* v */
        if (r < 0) {
                fprintf(stderr, "dbus-broker-controller: building AddListener: %s\n", strerror(-r));
                kdbus_message_unref(m);
                return r;
        }
        r = d1_send_fds(c, m, &listen_fd, 1);
        serial = kdbus_message_get_serial(m);
        kdbus_message_unref(m);
        if (r < 0)
                return r;
        deadline = d1_now_ms() + 10000;
        for (;;) {
                r = d1_recv(c, &reply, d1_left_ms(deadline));
                if (r < 0) {
                        fprintf(stderr, "dbus-broker-controller: no reply to AddListener: %s\n",
                                strerror(-r));
                        return r;
                }
                if (d1_is_reply_to(reply, serial))
                        break;
                kdbus_message_unref(reply);
                reply = NULL;
        }
        if (kdbus_message_get_type(reply) == KDBUS_MESSAGE_ERROR) {
                const char *text = NULL;

                if (strcmp(kdbus_message_get_signature(reply), "s") == 0)
                        kdbus_message_read(reply, "s", &text);
                fprintf(stderr, "dbus-broker-controller: AddListener: %s: %s\n",
                        kdbus_message_get_error_name(reply) ?: "?", text ?: "");
                kdbus_message_unref(reply);
                return -EIO;
        }
        kdbus_message_unref(reply);
        return 0;
}

/* a message from the broker after the set-up */
static int dispatch(struct d1 *c, struct kdbus_message *m)
{
        struct kdbus_message *e = NULL;
        int r;

        if (verbose)
                fprintf(stderr, "dbus-broker-controller: type %u %s.%s on %s\n",
                        kdbus_message_get_type(m), kdbus_message_get_interface(m) ?: "-",
                        kdbus_message_get_member(m) ?: "-", kdbus_message_get_path(m) ?: "-");
        if (kdbus_message_get_type(m) != KDBUS_MESSAGE_METHOD_CALL ||
            (kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED))
                return 0;
        /*
         * ReloadConfig (a client called org.freedesktop.DBus.ReloadConfig):
         * the configuration is fixed, so reloading it is done at once. An
         * error reply of another name than the broker expects
         * (org.bus1.DBus.Controller.Error.InvalidConfig) makes it exit.
         */
        if (kdbus_message_get_member(m) && !strcmp(kdbus_message_get_member(m), "ReloadConfig"))
                r = kdbus_message_new_method_return(&e, m);
        else
                r = kdbus_message_new_error(&e, m, "org.freedesktop.DBus.Error.NotSupported",
                                            "dbus-broker-controller does not implement this");
        if (r < 0)
                return 0;       /* an unanswerable call is the broker's business */
        r = d1_send(c, e);
        kdbus_message_unref(e);
        return r;
}

static int machine_id(char out[33])
{
        FILE *f = fopen("/etc/machine-id", "re");
        char line[64];

        if (f) {
                bool ok = fgets(line, sizeof(line), f) && strspn(line, "0123456789abcdef") == 32;

                fclose(f);
                if (ok) {
                        memcpy(out, line, 32);
                        out[32] = 0;
                        return 0;
                }
        }
        /* no machine id (the VM's guest): a fixed one will do for a bench */
        memcpy(out, "0123456789abcdef0123456789abcdef", 33);
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "address", required_argument, NULL, 'a' },
                { "broker", required_argument, NULL, 'b' },
                { "machine-id", required_argument, NULL, 'm' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *address = NULL, *broker = "/usr/bin/dbus-broker", *mid = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char idbuf[33];
        int sp[2], lp[2] = { -1, -1 }, lfd, sfd, c, r, status, ret = 1;
        struct d1 conn = { .fd = -1 };
        sigset_t mask;
        pid_t pid;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
                switch (c) {
                case 'a': address = optarg; break;
                case 'b': broker = optarg; break;
                case 'm': mid = optarg; break;
                case 'v': verbose = true; break;
                case 'h': usage(); return 0;
                default: usage(); return 2;
                }
        }
        if (!address || optind != argc) {
                usage();
                return 2;
        }
        if (!strncmp(address, "unix:path=", 10))
                address += 10;
        if (strchr(address, ',') || strchr(address, ';') || !*address ||
            strlen(address) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "dbus-broker-controller: only unix:path=SOCK is supported\n");
                return 2;
        }
        if (!mid) {
                machine_id(idbuf);
                mid = idbuf;
        }

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGCHLD);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC);
        if (sfd < 0) {
                perror("dbus-broker-controller: signalfd");
                return 1;
        }

        strcpy(sa.sun_path, address);
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (lfd < 0) {
                perror("dbus-broker-controller: socket");
                return 1;
        }
        unlink(address);
        if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4096) < 0) {
                fprintf(stderr, "dbus-broker-controller: %s: %m\n", address);
                return 1;
        }
        chmod(address, 0666);

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
                perror("dbus-broker-controller: socketpair");
                goto out_unlink;
        }
        /* the broker's log (journal-style datagrams) is printed with --verbose */
        if (verbose && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, lp) < 0) {
                perror("dbus-broker-controller: socketpair");
                goto out_unlink;
        }
        pid = fork();
        if (pid < 0) {
                perror("dbus-broker-controller: fork");
                goto out_unlink;
        }
        if (pid == 0) {
                sigprocmask(SIG_UNBLOCK, &mask, NULL);
                if (dup2(sp[1], 3) < 0 || (lp[1] >= 0 && dup2(lp[1], 4) < 0))
                        _exit(127);
                execl(broker, broker, "--controller", "3", "--machine-id", mid,
                      "--max-bytes", "1000000000", "--max-fds", "100000",
                      "--max-matches", "100000", "--max-objects", "100000",
                      lp[1] >= 0 ? "--log" : NULL, "4", (char *)NULL);
                fprintf(stderr, "dbus-broker-controller: %s: %m\n", broker);
                _exit(127);
        }
        close(sp[1]);
        if (lp[1] >= 0)
                close(lp[1]);
        conn.fd = sp[0];

        r = d1_auth(conn.fd, D1_AUTH_IR | D1_AUTH_FDS, 10000);
        if (r < 0) {
                fprintf(stderr, "dbus-broker-controller: SASL with the broker: %s\n", strerror(-r));
                goto out_kill;
        }
        r = add_listener(&conn, lfd);
        if (r < 0)
                goto out_kill;
        close(lfd);
        lfd = -1;
        printf("ready\n");
        fflush(stdout);

        for (;;) {
                struct pollfd p[3] = {
                        { .fd = conn.fd, .events = POLLIN },
                        { .fd = sfd, .events = POLLIN },
                        { .fd = lp[0], .events = POLLIN },
                };

                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("dbus-broker-controller: poll");
                        goto out_kill;
                }
                if (p[2].revents) {
                        char log[8192];
                        ssize_t n = recv(lp[0], log, sizeof(log) - 1, MSG_DONTWAIT);

                        if (n > 0) {
                                log[n] = 0;
                                fprintf(stderr, "dbus-broker-controller: broker log:\n%s\n", log);
                        }
                }
                if (p[1].revents) {
                        struct signalfd_siginfo si;

                        if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                                if (si.ssi_signo == SIGCHLD) {
                                        if (waitpid(pid, &status, WNOHANG) == pid) {
                                                fprintf(stderr, "dbus-broker-controller: the broker exited (status 0x%x)\n",
                                                        status);
                                                pid = 0;
                                                goto out_unlink;
                                        }
                                } else {
                                        ret = 0;
                                        goto out_kill;
                                }
                        }
                }
                if (p[0].revents) {
                        struct kdbus_message *m = NULL;

                        /* read what is there; d1_recv returns at the first whole message */
                        r = d1_fill(&conn, conn.len + 1, 0);
                        while (r >= 0) {
                                size_t total;

                                if (conn.len < KDBUS_MESSAGE_HEADER_SIZE ||
                                    kdbus_message_peek_size(conn.buf, conn.len, &total) < 0 ||
                                    conn.len < total) {
                                        /* incomplete (or bad: d1_recv reports it) */
                                        if (conn.len >= KDBUS_MESSAGE_HEADER_SIZE &&
                                            kdbus_message_peek_size(conn.buf, conn.len, &total) < 0)
                                                r = -EBADMSG;
                                        break;
                                }
                                r = d1_recv(&conn, &m, 0);
                                if (r < 0)
                                        break;
                                r = dispatch(&conn, m);
                                kdbus_message_unref(m);
                                m = NULL;
                        }
                        if (r < 0 && r != -ETIMEDOUT) {
                                fprintf(stderr, "dbus-broker-controller: controller connection: %s\n",
                                        strerror(-r));
                                goto out_kill;
                        }
                }
        }

out_kill:
        if (pid > 0) {
                kill(pid, SIGTERM);
                waitpid(pid, &status, 0);
        }
out_unlink:
        d1_close(&conn);
        if (lp[0] >= 0)
                close(lp[0]);
        if (lfd >= 0)
                close(lfd);
        unlink(address);
        return ret;
}
