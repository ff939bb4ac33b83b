// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bench-connect: connect-to-first-reply time, including service
 * activation, for native kdbus and for dbus-daemon.
 *
 *   kdbus-bench-connect kdbus [--runs=N] [--launcher=PATH] [--service=PATH] [--root=DIR]
 *   kdbus-bench-connect dbus-daemon [--runs=N] [--daemon=PATH]
 *   kdbus-bench-connect both [...]   (interleaved runs of the two, one process)
 *   common options: --tsv (machine-readable lines, see below), --verbose
 *   (per-run times and the launcher's / dbus-daemon's log), --settle=MS
 *   (pause between runs, default 50)
 *
 * kdbus: makes a fresh bus (kdbus_bus_make), runs proxy/kdbus-launcher on
 * it with one service file whose Exec is test/activation/test-service.
 * Each run, a new libkdbus client connects (HELLO) and calls Echo on the
 * activatable name: the launcher starts test-service, which takes the name
 * and answers. "cold" is that time, from before connecting until the
 * reply. Then "warm": another new connection and call while the service
 * runs. Then Quit; the next run starts when the name is back with the
 * activator (and a 50 ms settle), so every cold run activates.
 *
 * dbus-daemon: runs dbus-daemon --nofork with a private configuration
 * (allow-all policy, one <servicedir>) whose service file starts this
 * program as the service ("--d1-service", a classic D-Bus service over
 * the socket, libkdbus's marshaller, Echo/Quit like test-service). The
 * client connects to the unix socket, does SASL EXTERNAL, Hello, and the
 * Echo call (auto-start): "cold"; "warm" as above; then Quit and wait
 * until GetNameOwner fails.
 *
 * Prints per transport the median, min and max in µs of cold and warm
 * runs; with --tsv: "connect<TAB>TRANSPORT<TAB>cold|warm<TAB>median<TAB>min<TAB>max".
 * Both services are static programs started by fork+exec, and both are
 * started from a copy in the run directory ($TMPDIR, tmpfs in the VM), so
 * the difference is the buses' own work: without the copies the kdbus
 * service was exec'd from the VM's 9p view of the host (no page cache
 * kept between runs: every start read its pages from the host again,
 * ~50 ms under TCG) while dbus-daemon's was this very program, whose
 * pages the running client keeps cached. --verbose also prints when each
 * step happened ("trace WHO WHAT US", CLOCK_MONOTONIC): the client's
 * connect, HELLO and reply; the service's main(), HELLO, name and calls
 * (the services print theirs when $KDBUS_BENCH_TRACE is set, which
 * --verbose sets; the launcher's log, also printed, tells its steps).
 * In the VM, dbus-daemon mode must run
 * where /usr/bin/dbus-daemon works (chroot /host; for "both" with
 * /sys/fs/kdbus bound into it). Under a loaded TCG host prefer "both":
 * the two transports alternate run by run, so load spells hit both. The
 * service files, the services' copies, dbus-daemon's configuration and its
 * socket go to a new directory under $TMPDIR (default /tmp).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bus.h"
#include "dbus1.h"
#include "message.h"

#define SERVICE_NAME  "org.kdbus.BenchConnect"
#define SERVICE_PATH  "/t"
#define SERVICE_IFACE "org.kdbus.Test"
#define MAX_RUNS      1000
#define TIMEOUT_MS    30000

static bool tsv, verbose;
static unsigned int settle_ms = 50;

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* with $KDBUS_BENCH_TRACE (set by --verbose): "trace WHO WHAT MONOTONIC-US" */
static void trace(const char *who, const char *what)
{
        static int on = -1;

        if (on < 0)
                on = getenv("KDBUS_BENCH_TRACE") != NULL;
        if (on)
                fprintf(stderr, "trace %s %s %.0f\n", who, what, now_us());
}

static void sleep_ms(unsigned int ms)
{
        struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static void report(const char *transport, const char *what, double *v, size_t n)
{
        double med;

        if (!n) {
                fprintf(stderr, "kdbus-bench-connect: %s %s: no successful run\n", transport, what);
                return;
        }
        qsort(v, n, sizeof(*v), cmp_double);
        med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        if (tsv)
                printf("connect\t%s\t%s\t%.1f\t%.1f\t%.1f\n", transport, what, med, v[0], v[n - 1]);
        else
                printf("%-12s %-5s runs %3zu  median %9.1f us  min %9.1f  max %9.1f\n",
                       transport, what, n, med, v[0], v[n - 1]);
        fflush(stdout);
}

/* start @argv with stdout on a pipe; wait for a line starting with @word */
static pid_t spawn_wait(char **argv, const char *word, char *line, size_t size, bool quiet)
{
        int p[2];
        pid_t pid;
        FILE *f;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                dup2(p[1], 1);
                if (quiet) {
                        int null = open("/dev/null", O_WRONLY);

                        if (null >= 0)
                                dup2(null, 2);
                }
                execv(argv[0], argv);
                fprintf(stderr, "kdbus-bench-connect: %s: %m\n", argv[0]);
                _exit(127);
        }
        close(p[1]);
        f = fdopen(p[0], "r");
        if (!f)
                return -1;
        while (fgets(line, (int)size, f)) {
                if (!strncmp(line, word, strlen(word))) {
                        line[strcspn(line, "\n")] = 0;
                        /* the pipe stays open in the child; later output is dropped */
                        return pid;
                }
        }
        fclose(f);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return -1;
}

static void stop(pid_t pid)
{
        if (pid > 0) {
                kill(pid, SIGTERM);
                waitpid(pid, NULL, 0);
        }
}

static char *self_exe(void)
{
        static char buf[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

        if (n <= 0)
                return NULL;
        buf[n] = 0;
        return buf;
}

/* <dir of this program>/@rel */
static char *sibling(const char *rel)
{
        char *exe = self_exe(), *slash, *s;

        if (!exe || !(slash = strrchr(exe, '/')))
                return NULL;
        if (asprintf(&s, "%.*s/%s", (int)(slash - exe), exe, rel) < 0)
                return NULL;
        return s;
}

static int write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");

        if (!f)
                return -errno;
        fputs(text, f);
        return fclose(f) == 0 ? 0 : -EIO;
}

/* a new directory under $TMPDIR (default /tmp), or NULL */
static char *make_tmpdir(char *buf, size_t size)
{
        const char *tmp = getenv("TMPDIR");

        if (!tmp || !*tmp)
                tmp = "/tmp";
        if ((size_t)snprintf(buf, size, "%s/bench-connect.XXXXXX", tmp) >= size) {
                errno = ENAMETOOLONG;
                return NULL;
        }
        return mkdtemp(buf);
}

/* copy the executable @src to @dir/@name (@dst, PATH_MAX): the start of a service */
static int copy_exe(const char *src, const char *dir, const char *name, char *dst)
{
        char buf[65536];
        ssize_t n = 0;
        int in, out, r = 0;

        snprintf(dst, PATH_MAX, "%s/%s", dir, name);
        in = open(src, O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return -errno;
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (out < 0) {
                r = -errno;
                dst[0] = 0;
                close(in);
                return r;
        }
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, (size_t)n) != n) {
                        n = -1;
                        break;
                }
        if (n < 0)
                r = -EIO;
        close(in);
        if (close(out) < 0)
                r = -EIO;
        return r;
}

/* ---------------- kdbus ---------------- */

static int kdbus_echo(const char *bus_path, uint32_t *pid, bool quit)
{
        struct kdbus_bus *bus = NULL;
        struct kdbus_message *reply = NULL;
        struct kdbus_error e = KDBUS_ERROR_NULL;
        uint32_t n;
        int r;

        double t0 = now_us();

        trace("client", "connect");
        r = kdbus_bus_open(&bus, bus_path);
        trace("client", "hello");
        if (verbose)
                fprintf(stderr, "  kdbus: HELLO %.1f us\n", now_us() - t0);
        if (r >= 0)
                r = kdbus_bus_call_method(bus, SERVICE_NAME, SERVICE_PATH, SERVICE_IFACE, "Echo",
                                          &e, &reply, "u", 7u);
        trace("client", "reply");
        if (r >= 0 && kdbus_message_read(reply, "uu", &n, pid) < 0)
                r = -EBADMSG;
        if (r < 0)
                fprintf(stderr, "kdbus-bench-connect: kdbus Echo: %s %s\n",
                        e.name ?: strerror(-r), e.message ?: "");
        kdbus_message_unref(reply);
        reply = NULL;
        kdbus_error_free(&e);
        if (r >= 0 && quit) {
                /* Quit, then wait until the activator holds the name again */
                r = kdbus_bus_call_method(bus, SERVICE_NAME, SERVICE_PATH, SERVICE_IFACE, "Quit",
                                          &e, &reply, "");
                kdbus_message_unref(reply);
                kdbus_error_free(&e);
                for (int i = 0; r >= 0 && i < 5000; i++) {
                        char *owner = NULL;

                        if (kdbus_bus_get_name_owner(bus, SERVICE_NAME, &owner) < 0)
                                break;
                        free(owner);
                        sleep_ms(1);
                }
        }
        kdbus_bus_unref(bus);
        return r;
}

struct kdbus_env {
        char dir[256], file[PATH_MAX], exe[PATH_MAX];
        char *bus_path;
        int bus_fd;
        pid_t lpid;
};

static int kdbus_setup(struct kdbus_env *k, const char *launcher, const char *service,
                       const char *root)
{
        char name[64], text[PATH_MAX * 2 + 128], line[256], *largv[6] = { NULL };

        memset(k, 0, sizeof(*k));
        k->bus_fd = -1;
        k->lpid = -1;
        if (!make_tmpdir(k->dir, sizeof(k->dir))) {
                k->dir[0] = 0;
                return -errno;
        }
        snprintf(name, sizeof(name), "bench-connect-%d", (int)getpid());
        if (kdbus_bus_make(root, name, false, &k->bus_fd, &k->bus_path) < 0) {
                fprintf(stderr, "kdbus-bench-connect: cannot make a bus under %s\n",
                        root ?: KDBUS_BUS_DEFAULT_ROOT);
                return -ENODEV;
        }
        if (copy_exe(service, k->dir, "test-service", k->exe) < 0) {
                fprintf(stderr, "kdbus-bench-connect: cannot copy %s to %s\n", service, k->dir);
                return -EIO;
        }
        snprintf(k->file, sizeof(k->file), "%s/%s.service", k->dir, SERVICE_NAME);
        snprintf(text, sizeof(text), "[D-BUS Service]\nName=%s\nExec=%s %s %s\n",
                 SERVICE_NAME, k->exe, k->bus_path, SERVICE_NAME);
        if (write_file(k->file, text) < 0)
                return -EIO;
        setenv("XDG_DATA_DIRS", "/nonexistent", 1);
        setenv("XDG_DATA_HOME", "/nonexistent", 1);
        setenv("XDG_RUNTIME_DIR", "/nonexistent", 1);
        largv[0] = (char *)launcher;
        largv[1] = "--user";
        if (asprintf(&largv[2], "--bus=%s", k->bus_path) < 0 ||
            asprintf(&largv[3], "--servicedir=%s", k->dir) < 0)
                return -ENOMEM;
        largv[4] = verbose ? NULL : "--quiet";
        k->lpid = spawn_wait(largv, "ready", line, sizeof(line), false);
        free(largv[2]);
        free(largv[3]);
        if (k->lpid < 0) {
                fprintf(stderr, "kdbus-bench-connect: %s did not get ready\n", launcher);
                return -EIO;
        }
        return 0;
}

static void kdbus_teardown(struct kdbus_env *k)
{
        stop(k->lpid);
        if (k->bus_fd >= 0)
                close(k->bus_fd);
        free(k->bus_path);
        if (k->file[0])
                unlink(k->file);
        if (k->exe[0])
                unlink(k->exe);
        if (k->dir[0])
                rmdir(k->dir);
}

/* ---------------- dbus-daemon ---------------- */

/* a call whose reply is only checked: an ERROR is -EREMOTEIO */
static int d1_call_checked(struct d1 *c, struct kdbus_message *m, uint64_t deadline)
{
        struct kdbus_message *reply = NULL;
        int r;

        r = d1_call(c, m, &reply, d1_left_ms(deadline));
        if (r >= 0 && kdbus_message_get_type(reply) == KDBUS_MESSAGE_ERROR)
                r = -EREMOTEIO;
        kdbus_message_unref(reply);
        return r;
}

static int d1_echo(const char *address, uint32_t *pid, bool quit)
{
        struct kdbus_message *m = NULL, *reply = NULL;
        uint64_t deadline = d1_now_ms() + TIMEOUT_MS;
        struct d1 c;
        uint32_t n;
        int r;
        double t0 = now_us();

        trace("client", "connect");
        r = d1_open(&c, address, D1_AUTH_IR, TIMEOUT_MS);
        trace("client", "hello");
        if (r < 0) {
                fprintf(stderr, "kdbus-bench-connect: connect %s: %s\n", address, strerror(-r));
                d1_close(&c);
                return r;
        }
        if (verbose)
                fprintf(stderr, "  dbus-daemon: connect+SASL+Hello %.1f us\n", now_us() - t0);
        if (r >= 0)
                r = kdbus_message_new_method_call(&m, SERVICE_NAME, SERVICE_PATH, SERVICE_IFACE, "Echo");
        if (r >= 0)
                r = kdbus_message_append(m, "u", 7u);
        if (r >= 0)
                r = d1_call(&c, m, &reply, d1_left_ms(deadline));
        trace("client", "reply");
        if (r >= 0 && kdbus_message_get_type(reply) == KDBUS_MESSAGE_ERROR)
                r = -EREMOTEIO;
        else if (r >= 0 && kdbus_message_read(reply, "uu", &n, pid) < 0)
                r = -EBADMSG;
        if (r < 0)
                fprintf(stderr, "kdbus-bench-connect: dbus-daemon Echo: %s %s\n", strerror(-r),
                        reply ? kdbus_message_get_error_name(reply) ?: "" : "");
        kdbus_message_unref(m);
        kdbus_message_unref(reply);
        m = reply = NULL;
        if (r >= 0 && quit) {
                r = kdbus_message_new_method_call(&m, SERVICE_NAME, SERVICE_PATH, SERVICE_IFACE, "Quit");
                if (r >= 0)
                        r = d1_call_checked(&c, m, deadline);
                kdbus_message_unref(m);
                m = NULL;
                for (int i = 0; r >= 0 && i < 5000; i++) {
                        r = kdbus_message_new_method_call(&m, "org.freedesktop.DBus",
                                                          "/org/freedesktop/DBus",
                                                          "org.freedesktop.DBus", "GetNameOwner");
                        if (r >= 0)
                                r = kdbus_message_append(m, "s", SERVICE_NAME);
                        if (r >= 0)
                                r = d1_call_checked(&c, m, deadline);
                        kdbus_message_unref(m);
                        m = NULL;
                        if (r == -EREMOTEIO) {  /* NameHasNoOwner */
                                r = 0;
                                break;
                        }
                        sleep_ms(1);
                }
        }
        d1_close(&c);
        return r;
}

struct daemon_env {
        char dir[256], conf[PATH_MAX], svc[PATH_MAX], exe[PATH_MAX], sock[PATH_MAX], address[PATH_MAX + 16];
        pid_t dpid;
};

static int daemon_setup(struct daemon_env *d, const char *daemon)
{
        char text[PATH_MAX * 3 + 1024], line[512], *dargv[5] = { NULL };
        char *exe = self_exe();

        memset(d, 0, sizeof(*d));
        d->dpid = -1;
        if (!exe)
                return -ENOENT;
        if (!make_tmpdir(d->dir, sizeof(d->dir))) {
                d->dir[0] = 0;
                return -errno;
        }
        snprintf(d->sock, sizeof(d->sock), "%s/bus", d->dir);
        snprintf(d->address, sizeof(d->address), "unix:path=%s", d->sock);
        if (copy_exe(exe, d->dir, "d1-service", d->exe) < 0) {
                fprintf(stderr, "kdbus-bench-connect: cannot copy %s to %s\n", exe, d->dir);
                return -EIO;
        }
        snprintf(d->svc, sizeof(d->svc), "%s/%s.service", d->dir, SERVICE_NAME);
        snprintf(text, sizeof(text), "[D-BUS Service]\nName=%s\nExec=%s --d1-service\n",
                 SERVICE_NAME, d->exe);
        if (write_file(d->svc, text) < 0)
                return -EIO;
        snprintf(d->conf, sizeof(d->conf), "%s/bus.conf", d->dir);
        snprintf(text, sizeof(text),
                 "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                 " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                 "<busconfig>\n"
                 "  <type>session</type>\n"
                 "  <listen>unix:path=%s</listen>\n"
                 "  <auth>EXTERNAL</auth>\n"
                 "  <servicedir>%s</servicedir>\n"
                 "  <policy context=\"default\">\n"
                 "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
                 "    <allow eavesdrop=\"true\"/>\n"
                 "    <allow own=\"*\"/>\n"
                 "  </policy>\n"
                 "</busconfig>\n", d->sock, d->dir);
        if (write_file(d->conf, text) < 0)
                return -EIO;
        dargv[0] = (char *)daemon;
        dargv[1] = "--nofork";
        dargv[2] = "--print-address=1";
        if (asprintf(&dargv[3], "--config-file=%s", d->conf) < 0)
                return -ENOMEM;
        d->dpid = spawn_wait(dargv, "unix:", line, sizeof(line), !verbose);
        free(dargv[3]);
        if (d->dpid < 0) {
                fprintf(stderr, "kdbus-bench-connect: %s did not print its address\n", daemon);
                return -EIO;
        }
        return 0;
}

/*
 * One cold and one warm connection through @echo (kdbus_echo or d1_echo),
 * then Quit.
 */
static int cold_warm_run(const char *transport,
                         int (*echo)(const char *address, uint32_t *pid, bool quit),
                         const char *address, unsigned int i, double *cold, double *warm)
{
        uint32_t pid1 = 0, pid2 = 0;
        double t0 = now_us();

        if (echo(address, &pid1, false) < 0)
                return -EIO;
        *cold = now_us() - t0;
        if (verbose)
                fprintf(stderr, "%s run %u: cold %.1f us\n", transport, i, *cold);
        t0 = now_us();
        if (echo(address, &pid2, false) < 0)
                return -EIO;
        *warm = now_us() - t0;
        if (pid1 != pid2)
                fprintf(stderr, "kdbus-bench-connect: %s: the service changed (%u, %u)\n",
                        transport, pid1, pid2);
        return echo(address, &pid2, true) < 0 ? -EIO : 0;
}

static void daemon_teardown(struct daemon_env *d)
{
        stop(d->dpid);
        if (d->svc[0])
                unlink(d->svc);
        if (d->conf[0])
                unlink(d->conf);
        if (d->exe[0])
                unlink(d->exe);
        if (d->sock[0])
                unlink(d->sock);
        if (d->dir[0])
                rmdir(d->dir);
}

/*
 * The runs; with both transports they alternate (and which goes first
 * alternates too), so a slow spell of the emulated machine hits both.
 */
static int run(unsigned int runs, bool do_kdbus, bool do_daemon, const char *launcher,
               const char *service, const char *root, const char *daemon)
{
        double *kc = calloc(runs, sizeof(double)), *kw = calloc(runs, sizeof(double));
        double *dc = calloc(runs, sizeof(double)), *dw = calloc(runs, sizeof(double));
        struct kdbus_env k = { .bus_fd = -1, .lpid = -1 };
        struct daemon_env d = { .dpid = -1 };
        size_t nk = 0, nd = 0;
        int r = 1;

        if (!kc || !kw || !dc || !dw)
                goto out;
        if (do_kdbus && kdbus_setup(&k, launcher, service, root) < 0)
                goto out;
        if (do_daemon && daemon_setup(&d, daemon) < 0)
                goto out;
        for (unsigned int i = 0; i < runs; i++) {
                for (unsigned int j = 0; j < 2; j++) {
                        bool kd = (i + j) % 2 == 0;

                        if (kd && do_kdbus) {
                                if (cold_warm_run("kdbus", kdbus_echo, k.bus_path, i,
                                                  &kc[nk], &kw[nk]) < 0)
                                        goto report;
                                nk++;
                        } else if (!kd && do_daemon) {
                                if (cold_warm_run("dbus-daemon", d1_echo, d.address, i,
                                                  &dc[nd], &dw[nd]) < 0)
                                        goto report;
                                nd++;
                        } else {
                                continue;
                        }
                        sleep_ms(settle_ms);
                }
        }
        r = 0;
report:
        if (do_kdbus) {
                report("kdbus", "cold", kc, nk);
                report("kdbus", "warm", kw, nk);
        }
        if (do_daemon) {
                report("dbus-daemon", "cold", dc, nd);
                report("dbus-daemon", "warm", dw, nd);
        }
out:
        kdbus_teardown(&k);
        daemon_teardown(&d);
        free(kc);
        free(kw);
        free(dc);
        free(dw);
        return r;
}

/* the activatable classic service (started by dbus-daemon) */
static int d1_service(void)
{
        const char *address = getenv("DBUS_STARTER_ADDRESS");
        struct kdbus_message *m = NULL;
        uint32_t rn_serial = 0;
        struct d1 c;
        int r;

        trace("service", "main");
        if (!address) {
                fprintf(stderr, "kdbus-bench-connect --d1-service: no DBUS_STARTER_ADDRESS\n");
                return 2;
        }
        r = d1_open(&c, address, D1_AUTH_IR, TIMEOUT_MS);
        if (r < 0) {
                fprintf(stderr, "kdbus-bench-connect --d1-service: %s\n", strerror(-r));
                d1_close(&c);
                return 1;
        }
        trace("service", "hello");
        /* the queued calls may come before the RequestName reply: one loop */
        if (r >= 0)
                r = kdbus_message_new_method_call(&m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                  "org.freedesktop.DBus", "RequestName");
        if (r >= 0)
                r = kdbus_message_append(m, "su", SERVICE_NAME, 4u /* DO_NOT_QUEUE */);
        if (r >= 0)
                r = d1_send(&c, m);
        if (r >= 0)
                rn_serial = kdbus_message_get_serial(m);
        kdbus_message_unref(m);
        if (r < 0) {
                fprintf(stderr, "kdbus-bench-connect --d1-service: %s\n", strerror(-r));
                d1_close(&c);
                return 1;
        }
        for (;;) {
                struct kdbus_message *in = NULL, *out = NULL;
                const char *member;
                bool quit = false;
                uint32_t n;

                r = d1_next(&c, &in, -1);
                if (r < 0)
                        break;
                member = kdbus_message_get_member(in);
                if (kdbus_message_get_reply_serial(in, &n) >= 0 && n == rn_serial) {
                        uint32_t result = 0;

                        trace("service", "name");
                        if (kdbus_message_get_type(in) != KDBUS_MESSAGE_METHOD_RETURN ||
                            kdbus_message_read(in, "u", &result) < 0 || result != 1) {
                                fprintf(stderr, "kdbus-bench-connect --d1-service: RequestName failed\n");
                                kdbus_message_unref(in);
                                break;
                        }
                }
                if (kdbus_message_get_type(in) != KDBUS_MESSAGE_METHOD_CALL || !member) {
                        kdbus_message_unref(in);
                        continue;
                }
                trace("service", member);
                if (!strcmp(member, "Echo") && kdbus_message_read(in, "u", &n) >= 0) {
                        r = kdbus_message_new_method_return(&out, in);
                        if (r >= 0)
                                r = kdbus_message_append(out, "uu", n, (uint32_t)getpid());
                } else if (!strcmp(member, "Quit")) {
                        r = kdbus_message_new_method_return(&out, in);
                        quit = true;
                } else {
                        r = kdbus_message_new_error(&out, in, "org.freedesktop.DBus.Error.UnknownMethod",
                                                    member);
                }
                if (r >= 0 && !(kdbus_message_get_flags(in) & KDBUS_MESSAGE_NO_REPLY_EXPECTED))
                        r = d1_send(&c, out);
                kdbus_message_unref(out);
                kdbus_message_unref(in);
                if (quit || r < 0)
                        break;
        }
        d1_close(&c);
        return 0;
}

static void usage(void)
{
        fprintf(stderr,
                "usage: kdbus-bench-connect [--tsv] [--runs=N] kdbus [--launcher=PATH] [--service=PATH] [--root=DIR]\n"
                "       kdbus-bench-connect [--tsv] [--runs=N] dbus-daemon [--daemon=PATH]\n"
                "       kdbus-bench-connect [--tsv] [--runs=N] both [the options of both]\n"
                "common: --verbose --settle=MS\n");
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "runs", required_argument, NULL, 'n' },
                { "launcher", required_argument, NULL, 'l' },
                { "service", required_argument, NULL, 's' },
                { "root", required_argument, NULL, 'r' },
                { "daemon", required_argument, NULL, 'd' },
                { "tsv", no_argument, NULL, 't' },
                { "verbose", no_argument, NULL, 'v' },
                { "settle", required_argument, NULL, 'w' },
                { "d1-service", no_argument, NULL, 'S' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *launcher = NULL, *service = NULL, *root = NULL, *daemon = "/usr/bin/dbus-daemon";
        unsigned long runs = 10;
        bool do_kdbus, do_daemon;
        const char *mode;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
                switch (c) {
                case 'n':
                        runs = strtoul(optarg, NULL, 10);
                        if (runs < 1 || runs > MAX_RUNS) {
                                fprintf(stderr, "kdbus-bench-connect: --runs is 1..%d\n", MAX_RUNS);
                                return 2;
                        }
                        break;
                case 'l': launcher = optarg; break;
                case 's': service = optarg; break;
                case 'r': root = optarg; break;
                case 'd': daemon = optarg; break;
                case 't': tsv = true; break;
                case 'v':
                        verbose = true;
                        setenv("KDBUS_BENCH_TRACE", "1", 1);
                        break;
                case 'w': settle_ms = (unsigned int)strtoul(optarg, NULL, 10); break;
                case 'S': return d1_service();
                case 'h': usage(); return 0;
                default: usage(); return 2;
                }
        }
        if (optind + 1 != argc) {
                usage();
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        mode = argv[optind];
        do_kdbus = !strcmp(mode, "kdbus") || !strcmp(mode, "both");
        do_daemon = !strcmp(mode, "dbus-daemon") || !strcmp(mode, "both");
        if (do_kdbus) {
                if (!launcher)
                        launcher = sibling("../proxy/kdbus-launcher");
                if (!service)
                        service = sibling("../test/activation/test-service");
                if (!launcher || !service)
                        return 1;
        }
        if (do_kdbus || do_daemon)
                return run((unsigned int)runs, do_kdbus, do_daemon, launcher, service, root, daemon);
        usage();
        return 2;
}
