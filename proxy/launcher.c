// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The activation launcher (Documentation/activation.md). See launcher.h.
 *
 * Race freedom comes from the kernel: messages for a name wait in its
 * activator until a real connection takes the name, which moves them
 * (and their reply records) to it in one step. The launcher only
 * watches, starts and reports: it never receives (dequeues) a message
 * from an activator, except to drop them after a failed start.
 *
 * A state change is decided by the watcher's NAME_CHANGE notifications
 * alone; before a child's exit or a timeout is judged, the watcher's
 * queue is drained, so a service that took its name and then exited is
 * never reported as failed.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "launcher.h"

extern char **environ;

#define ACTIVATOR_POOL_SIZE     (16ULL * 1024 * 1024)
#define WATCHER_POOL_SIZE       (4ULL * 1024 * 1024)
#define FAIL_BURST              5
#define FAIL_WINDOW_MSEC        (10 * 1000)
#define FAIL_HOLD_MSEC          (60 * 1000)
#define ERR_PREFIX              "org.freedesktop.DBus.Error."

#define ALIGN8(x)               (((x) + 7) & ~(size_t)7)
#define ITEM_HEADER             offsetof(struct kdbus_item, data)

enum source_kind { SRC_WATCHER, SRC_ACTIVATOR, SRC_TIMER, SRC_CHILD };

struct source {
        enum source_kind kind;
        void *ptr;
};

struct waiter {
        launcher_start_cb cb;
        void *userdata;
        struct waiter *next;
};

struct activation;

/* a started process, followed until reaped (also after its activation ended) */
struct child {
        struct source src;
        struct launcher *l;
        struct activation *a;   /* NULL once detached */
        pid_t pid;
        int pidfd;
        int errpipe;            /* read end: {stage, errno} from the child */
        struct child *next;
};

struct activation {
        struct launcher *l;
        char *name;
        char **argv;
        char *user;
        int fd;
        void *pool;
        uint64_t id;
        enum launcher_state state;
        bool watching;
        struct source src_fd, src_timer;
        int timerfd;
        struct child *child;
        struct waiter *waiters;
        uint64_t fail_times[FAIL_BURST];
        unsigned int n_fail;
        uint64_t failed_until;
        char *err_name, *err_message;
        struct activation *next;
};

struct launcher {
        char *bus_path;
        enum service_bus_type type;
        char **extra_dirs;
        int epfd;
        int watcher_fd;
        void *watcher_pool;
        struct source src_watcher;
        struct activation *activations;
        struct child *children;
        char **env;             /* KEY=VALUE from UpdateActivationEnvironment */
        char *starter_address;
        char *state_file;
        unsigned int timeout_msec;
        bool verbose;
};

enum child_stage { STAGE_SETUP = 1, STAGE_EXEC = 2 };

const char *launcher_state_name(enum launcher_state s)
{
        switch (s) {
        case LAUNCHER_IDLE:
                return "idle";
        case LAUNCHER_STARTING:
                return "starting";
        case LAUNCHER_RUNNING:
                return "running";
        case LAUNCHER_FAILED:
                return "failed";
        }
        return "?";
}

static uint64_t now_msec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(struct launcher *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct launcher *l, const char *fmt, ...)
{
        va_list ap;

        if (!l->verbose)
                return;
        va_start(ap, fmt);
        fprintf(stderr, "kdbus-launcher: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
}

static int kioctl(int fd, unsigned long cmd, void *arg)
{
        return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static int kfree_slice(int fd, uint64_t offset)
{
        struct kdbus_cmd_free f = { .size = sizeof(f), .offset = offset };

        return kioctl(fd, KDBUS_CMD_FREE, &f);
}

static struct kdbus_item *item_append(struct kdbus_item *it, uint64_t type, const void *data,
                                      size_t len)
{
        /* byte copies: an item may be smaller than struct kdbus_item's union */
        uint64_t header[2] = { ITEM_HEADER + len, type };
        char *p = (char *)it;

        memcpy(p, header, sizeof(header));
        memcpy(p + ITEM_HEADER, data, len);
        return (struct kdbus_item *)(p + ALIGN8(ITEM_HEADER + len));
}

/* HELLO on @path; maps the pool read-only and frees the HELLO slice */
static int hello(const char *path, uint64_t flags, uint64_t pool_size, const char *name,
                 uid_t owner, const char *description, int *ret_fd, void **ret_pool,
                 uint64_t *ret_id)
{
        size_t size = sizeof(struct kdbus_cmd_hello) + ALIGN8(ITEM_HEADER + 256) * 2 +
                      ALIGN8(ITEM_HEADER + sizeof(struct kdbus_policy_access)) * 2;
        struct kdbus_cmd_hello *h = calloc(1, size);
        struct kdbus_item *it;
        void *pool;
        int fd, r;

        if (!h)
                return -ENOMEM;
        h->flags = flags;
        h->attach_flags_recv = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS | KDBUS_ATTACH_PID_COMM;
        h->pool_size = pool_size;
        it = h->items;
        it = item_append(it, KDBUS_ITEM_CONN_DESCRIPTION, description, strlen(description) + 1);
        if (name) {
                struct kdbus_policy_access own = {
                        .type = KDBUS_POLICY_ACCESS_USER, .access = KDBUS_POLICY_OWN, .id = owner,
                };
                struct kdbus_policy_access talk = {
                        .type = KDBUS_POLICY_ACCESS_WORLD, .access = KDBUS_POLICY_TALK,
                };

                it = item_append(it, KDBUS_ITEM_NAME, name, strlen(name) + 1);
                it = item_append(it, KDBUS_ITEM_POLICY_ACCESS, &own, sizeof(own));
                it = item_append(it, KDBUS_ITEM_POLICY_ACCESS, &talk, sizeof(talk));
        }
        h->size = (char *)it - (char *)h;
        fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                free(h);
                return -errno;
        }
        r = kioctl(fd, KDBUS_CMD_HELLO, h);
        if (r < 0)
                goto fail;
        pool = mmap(NULL, h->pool_size, PROT_READ, MAP_SHARED, fd, 0);
        if (pool == MAP_FAILED) {
                r = -errno;
                goto fail;
        }
        kfree_slice(fd, h->offset);
        *ret_fd = fd;
        *ret_pool = pool;
        *ret_id = h->id;
        free(h);
        return 0;
fail:
        close(fd);
        free(h);
        return r;
}

/*
 * Service users are local accounts: read /etc/passwd directly, since NSS
 * modules cannot be loaded by a static binary; getpwnam() as a fallback.
 */
static struct passwd *lookup_user(const char *name)
{
        static struct passwd pw;
        static char buf[1024];
        struct passwd *p;
        FILE *f = fopen("/etc/passwd", "re");

        if (f) {
                while ((p = fgetpwent(f))) {
                        if (!strcmp(p->pw_name, name) && strlen(p->pw_name) < sizeof(buf)) {
                                pw = *p;
                                strcpy(buf, p->pw_name);
                                pw.pw_name = buf;
                                pw.pw_passwd = pw.pw_gecos = pw.pw_dir = pw.pw_shell = NULL;
                                fclose(f);
                                return &pw;
                        }
                }
                fclose(f);
        }
        return getpwnam(name);
}

static void state_write(struct launcher *l)
{
        char *tmp;
        FILE *f;

        if (!l->state_file || asprintf(&tmp, "%s.tmp", l->state_file) < 0)
                return;
        f = fopen(tmp, "we");
        if (f) {
                fprintf(f, "# name state pid failures\n");
                for (struct activation *a = l->activations; a; a = a->next) {
                        enum launcher_state s = a->state;

                        if (s == LAUNCHER_FAILED && now_msec() >= a->failed_until)
                                s = LAUNCHER_IDLE;
                        fprintf(f, "%s %s %d %u\n", a->name, launcher_state_name(s),
                                a->child ? (int)a->child->pid : 0, a->n_fail);
                }
                if (fclose(f) == 0)
                        rename(tmp, l->state_file);
        }
        free(tmp);
}

static void watch(struct activation *a, bool on)
{
        struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.ptr = &a->src_fd };

        if (a->watching == on || a->fd < 0)
                return;
        epoll_ctl(a->l->epfd, EPOLL_CTL_MOD, a->fd, &ev);
        a->watching = on;
}

static void timer_arm(struct activation *a, unsigned int msec)
{
        struct itimerspec its = {
                .it_value = { .tv_sec = msec / 1000, .tv_nsec = (msec % 1000) * 1000000L },
        };

        if (a->timerfd < 0) {
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &a->src_timer };

                a->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (a->timerfd < 0)
                        return;
                epoll_ctl(a->l->epfd, EPOLL_CTL_ADD, a->timerfd, &ev);
        }
        timerfd_settime(a->timerfd, 0, &its, NULL);
}

static void complete_waiters(struct activation *a, unsigned int result, const char *err,
                             const char *msg)
{
        struct waiter *w = a->waiters;

        a->waiters = NULL;
        while (w) {
                struct waiter *next = w->next;

                w->cb(w->userdata, result, err, msg);
                free(w);
                w = next;
        }
}

/* drop every queued message: each dropped call gives its sender REPLY_DEAD */
static unsigned int drop_queue(struct activation *a)
{
        unsigned int n = 0;

        for (;;) {
                struct kdbus_cmd_recv recv = { .size = sizeof(recv), .flags = KDBUS_RECV_DROP };

                if (kioctl(a->fd, KDBUS_CMD_RECV, &recv) < 0)
                        break;
                n++;
        }
        return n;
}

static void detach_child(struct activation *a, bool kill_it)
{
        if (!a->child)
                return;
        if (kill_it)
                kill(a->child->pid, SIGTERM);
        a->child->a = NULL;
        a->child = NULL;
}

static void activation_fail(struct activation *a, const char *err, const char *msg)
{
        uint64_t now = now_msec();
        unsigned int dropped, recent = 0;

        free(a->err_name);
        free(a->err_message);
        a->err_name = strdup(err);
        a->err_message = strdup(msg);
        timer_arm(a, 0);
        detach_child(a, true);
        complete_waiters(a, 0, err, msg);
        dropped = drop_queue(a);
        a->fail_times[a->n_fail++ % FAIL_BURST] = now;
        for (unsigned int i = 0; i < FAIL_BURST && i < a->n_fail; i++)
                recent += now - a->fail_times[i] < FAIL_WINDOW_MSEC;
        if (recent >= FAIL_BURST) {
                a->failed_until = now + FAIL_HOLD_MSEC;
                a->state = LAUNCHER_FAILED;
        } else {
                a->state = LAUNCHER_IDLE;
        }
        logf_(a->l, "%s: activation failed: %s: %s (%u queued messages dropped)%s", a->name, err,
              msg, dropped, a->state == LAUNCHER_FAILED ? "; rate limited for 60 s" : "");
        watch(a, true);
        state_write(a->l);
}

static char **build_env(struct launcher *l)
{
        size_t n = 0, k = 0;
        char **env;

        for (char **e = environ; e && *e; e++)
                n++;
        for (char **e = l->env; e && *e; e++)
                n++;
        env = calloc(n + 3, sizeof(*env));
        if (!env)
                return NULL;
        for (char **e = environ; e && *e; e++) {
                size_t kl = strcspn(*e, "=");
                bool overridden = !strncmp(*e, "DBUS_STARTER_", 13);

                for (char **x = l->env; x && *x && !overridden; x++)
                        overridden = !strncmp(*x, *e, kl) && (*x)[kl] == '=';
                if (!overridden)
                        env[k++] = *e;  /* borrowed */
        }
        for (char **e = l->env; e && *e; e++)
                env[k++] = *e;          /* borrowed */
        return env;
}

/*
 * @pw's supplementary groups (@ngroups set), or NULL without memory;
 * without NSS (static binary) or /etc/group, only the primary group
 */
static gid_t *groups_of(const struct passwd *pw, int *ngroups)
{
        int n = 32;
        gid_t *g = NULL;

        for (int tries = 0; tries < 4; tries++) {
                gid_t *ng = realloc(g, (size_t)n * sizeof(*g));
                int want = n;

                if (!ng)
                        break;
                g = ng;
                if (getgrouplist(pw->pw_name, pw->pw_gid, g, &want) >= 0) {
                        *ngroups = want;
                        return g;
                }
                if (want <= n)
                        break;
                n = want;
        }
        if (!g)
                g = malloc(sizeof(*g));
        if (g) {
                g[0] = pw->pw_gid;
                *ngroups = 1;
        }
        return g;
}

static void child_report(int fd, int stage, int err)
{
        int msg[2] = { stage, err };

        if (write(fd, msg, sizeof(msg)) < 0)
                _exit(127);
        _exit(127);
}

/* what the vforked child needs, prepared by the parent (the child may not allocate) */
struct spawn {
        char **argv, **env;
        gid_t *groups;          /* NULL: keep the credentials */
        int ngroups;
        uid_t uid;
        gid_t gid;
        int errfd;              /* write end of the error pipe */
};

static __attribute__((noreturn)) void spawn_child(const struct spawn *sp)
{
        sigset_t none;
        int null;

        for (int s = 1; s < NSIG; s++)
                signal(s, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (setsid() < 0)
                child_report(sp->errfd, STAGE_SETUP, errno);
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0)
                child_report(sp->errfd, STAGE_SETUP, errno);
        if (sp->groups && (setgroups((size_t)sp->ngroups, sp->groups) < 0 ||
                           setresgid(sp->gid, sp->gid, sp->gid) < 0 ||
                           setresuid(sp->uid, sp->uid, sp->uid) < 0))
                child_report(sp->errfd, STAGE_SETUP, errno);
        execve(sp->argv[0], sp->argv, sp->env);
        child_report(sp->errfd, STAGE_EXEC, errno);
        _exit(127);
}

static int activation_start(struct activation *a)
{
        struct launcher *l = a->l;
        char starter[2][600];
        struct epoll_event ev;
        struct passwd *pw = NULL;
        struct spawn sp = { 0 };
        sigset_t all, saved;
        bool setuser;
        struct child *c;
        char **env;
        int pipefd[2], pidfd, err;
        size_t k;
        pid_t pid;

        if (l->type == SERVICE_BUS_SYSTEM) {
                pw = lookup_user(a->user);
                if (!pw) {
                        activation_fail(a, ERR_PREFIX "Spawn.FailedToSetup", "User= is unknown");
                        return -ESRCH;
                }
        }
        snprintf(starter[0], sizeof(starter[0]), "DBUS_STARTER_ADDRESS=%s", l->starter_address);
        snprintf(starter[1], sizeof(starter[1]), "DBUS_STARTER_BUS_TYPE=%s",
                 l->type == SERVICE_BUS_SYSTEM ? "system" : "session");
        setuser = pw && (getuid() != pw->pw_uid || geteuid() != pw->pw_uid);
        if (setuser) {
                sp.groups = groups_of(pw, &sp.ngroups);
                sp.uid = pw->pw_uid;
                sp.gid = pw->pw_gid;
        }
        env = build_env(l);
        c = calloc(1, sizeof(*c));
        if (!env || !c || (setuser && !sp.groups) ||
            pipe2(pipefd, O_CLOEXEC) < 0) {
                free(env);
                free(c);
                free(sp.groups);
                activation_fail(a, ERR_PREFIX "Spawn.Failed", strerror(errno ?: ENOMEM));
                return -ENOMEM;
        }
        for (k = 0; env[k]; k++)
                ;
        env[k++] = starter[0];
        env[k] = starter[1];

        /*
         * vfork: no copy of the launcher's page tables and no copy-on-write
         * faults on either side before the exec (the parent waits until the
         * exec or the child's _exit). The child only makes system calls on
         * data prepared above; every signal stays blocked until its handlers
         * are reset (its dispositions are its own, no CLONE_SIGHAND).
         */
        sp.argv = a->argv;
        sp.env = env;
        sp.errfd = pipefd[1];
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved);
        pid = vfork();
        if (pid == 0) {
                close(pipefd[0]);
                spawn_child(&sp);
        }
        err = errno;
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        free(sp.groups);
        free(env);
        close(pipefd[1]);
        if (pid < 0) {
                close(pipefd[0]);
                free(c);
                activation_fail(a, ERR_PREFIX "Spawn.ForkFailed", strerror(err));
                return -err;
        }
        pidfd = syscall(SYS_pidfd_open, pid, 0);
        c->src = (struct source){ SRC_CHILD, c };
        c->l = l;
        c->a = a;
        c->pid = pid;
        c->pidfd = pidfd;
        c->errpipe = pipefd[0];
        c->next = l->children;
        l->children = c;
        a->child = c;
        ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &c->src };
        if (pidfd >= 0)
                epoll_ctl(l->epfd, EPOLL_CTL_ADD, pidfd, &ev);
        a->state = LAUNCHER_STARTING;
        watch(a, false);
        timer_arm(a, l->timeout_msec);
        logf_(l, "%s: started %s as pid %d", a->name, a->argv[0], (int)pid);
        state_write(l);
        return 0;
}

/* IDLE and readable: PEEK at the first message (it stays queued), then start */
static void activation_trigger(struct activation *a)
{
        struct kdbus_cmd_recv recv = { .size = sizeof(recv), .flags = KDBUS_RECV_PEEK };
        uint64_t src = 0;
        int r;

        if (a->state == LAUNCHER_FAILED) {
                if (now_msec() < a->failed_until) {
                        unsigned int n = drop_queue(a);

                        logf_(a->l, "%s: rate limited, %u messages dropped", a->name, n);
                        return;
                }
                a->state = LAUNCHER_IDLE;
        }
        if (a->state != LAUNCHER_IDLE)
                return;
        r = kioctl(a->fd, KDBUS_CMD_RECV, &recv);
        if (r == -EAGAIN)
                return;
        if (r == 0) {
                const struct kdbus_msg *m = (const void *)((char *)a->pool + recv.msg.offset);

                src = m->src_id;
                kfree_slice(a->fd, recv.msg.offset);
        }
        logf_(a->l, "%s: activation requested by connection %llu", a->name,
              (unsigned long long)src);
        activation_start(a);
}

static struct activation *find_activation(struct launcher *l, const char *name)
{
        for (struct activation *a = l->activations; a; a = a->next)
                if (!strcmp(a->name, name))
                        return a;
        return NULL;
}

static void name_changed(struct launcher *l, const struct kdbus_notify_name_change *nc)
{
        struct activation *a = find_activation(l, nc->name);

        if (!a)
                return;
        if (nc->old_id.id == a->id && nc->new_id.id != a->id) {
                /* hand-over: the kernel moved the queue to the new owner */
                a->state = LAUNCHER_RUNNING;
                timer_arm(a, 0);
                watch(a, false);
                logf_(l, "%s: taken by connection %llu", a->name,
                      (unsigned long long)nc->new_id.id);
                complete_waiters(a, 1, NULL, NULL);
                state_write(l);
        } else if (nc->new_id.id == a->id && nc->old_id.id != a->id) {
                /* the service gave it back; queued traffic starts it again */
                a->state = LAUNCHER_IDLE;
                timer_arm(a, 0);
                if (a->child && a->child->a == a)
                        detach_child(a, false);
                logf_(l, "%s: released by connection %llu", a->name,
                      (unsigned long long)nc->old_id.id);
                watch(a, true);
                state_write(l);
        }
}

static void watcher_drain(struct launcher *l)
{
        for (;;) {
                struct kdbus_cmd_recv recv = { .size = sizeof(recv) };
                const struct kdbus_msg *m;
                const struct kdbus_item *it;

                if (kioctl(l->watcher_fd, KDBUS_CMD_RECV, &recv) < 0)
                        return;
                m = (const void *)((char *)l->watcher_pool + recv.msg.offset);
                if (m->src_id == KDBUS_SRC_ID_KERNEL) {
                        for (it = m->items; (const char *)it < (const char *)m + m->size &&
                             it->size >= ITEM_HEADER;
                             it = (const void *)((const char *)it + ALIGN8(it->size))) {
                                if (it->type == KDBUS_ITEM_NAME_CHANGE &&
                                    it->size > ITEM_HEADER + sizeof(struct kdbus_notify_name_change))
                                        name_changed(l, &it->name_change);
                        }
                }
                kfree_slice(l->watcher_fd, recv.msg.offset);
        }
}

static void child_exited(struct child *c)
{
        struct launcher *l = c->l;
        struct activation *a;
        int status, report[2];
        ssize_t n;
        char msg[512];

        if (waitpid(c->pid, &status, WNOHANG) <= 0)
                return;
        /* the hand-over may be queued in the watcher before this exit */
        watcher_drain(l);
        a = c->a;
        n = read(c->errpipe, report, sizeof(report));
        if (a && a->child == c) {
                /* reaped: nothing may signal this pid any more */
                a->child = NULL;
                c->a = NULL;
        }
        if (a && a->state == LAUNCHER_STARTING && !a->child) {
                if (n == sizeof(report) && report[0] == STAGE_EXEC) {
                        snprintf(msg, sizeof(msg), "Failed to execute program %s: %s",
                                 a->argv[0], strerror(report[1]));
                        activation_fail(a, ERR_PREFIX "Spawn.ExecFailed", msg);
                } else if (n == sizeof(report)) {
                        snprintf(msg, sizeof(msg), "Failed to set up the process for %s: %s",
                                 a->name, strerror(report[1]));
                        activation_fail(a, ERR_PREFIX "Spawn.FailedToSetup", msg);
                } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
                        snprintf(msg, sizeof(msg), "Process %s exited with status %d", a->name,
                                 WEXITSTATUS(status));
                        activation_fail(a, ERR_PREFIX "Spawn.ChildExited", msg);
                } else if (WIFSIGNALED(status)) {
                        snprintf(msg, sizeof(msg), "Process %s received signal %d", a->name,
                                 WTERMSIG(status));
                        activation_fail(a, ERR_PREFIX "Spawn.ChildSignaled", msg);
                } else {
                        /* status 0 before the name: maybe daemonised; the timer decides */
                        logf_(l, "%s: pid %d exited with status 0 before taking the name",
                              a->name, (int)c->pid);
                }
        }
        for (struct child **p = &l->children; *p; p = &(*p)->next) {
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        }
        if (c->pidfd >= 0) {
                epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->pidfd, NULL);
                close(c->pidfd);
        }
        close(c->errpipe);
        free(c);
        state_write(l);
}

static void timer_expired(struct activation *a)
{
        uint64_t ticks;
        char msg[512];

        if (read(a->timerfd, &ticks, sizeof(ticks)) != sizeof(ticks))
                return;
        watcher_drain(a->l);
        if (a->state != LAUNCHER_STARTING)
                return;
        snprintf(msg, sizeof(msg), "Activation of %s timed out", a->name);
        activation_fail(a, ERR_PREFIX "TimedOut", msg);
}

int launcher_dispatch(struct launcher *l)
{
        struct epoll_event evs[32];
        int n;

        do {
again:
                n = epoll_wait(l->epfd, evs, 32, 0);
                if (n < 0)
                        return errno == EINTR ? 0 : -errno;
                /* notifications first: they decide every state */
                watcher_drain(l);
                for (int i = 0; i < n; i++) {
                        struct source *s = evs[i].data.ptr;

                        switch (s->kind) {
                        case SRC_WATCHER:
                                break;
                        case SRC_ACTIVATOR:
                                activation_trigger(s->ptr);
                                break;
                        case SRC_TIMER:
                                timer_expired(s->ptr);
                                break;
                        case SRC_CHILD:
                                child_exited(s->ptr);
                                /* later events of this batch may point at the freed child */
                                goto again;
                        }
                }
        } while (n > 0);
        /* children without a pidfd (should not happen on Linux >= 5.3) */
        for (struct child *c = l->children, *next; c; c = next) {
                next = c->next;
                if (c->pidfd < 0)
                        child_exited(c);
        }
        return 0;
}

static int strv_copy(char *const *src, char ***ret)
{
        size_t n = 0;
        char **v;

        while (src && src[n])
                n++;
        v = calloc(n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                v[i] = strdup(src[i]);
                if (!v[i]) {
                        service_strv_free(v);
                        return -ENOMEM;
                }
        }
        *ret = v;
        return 0;
}

static void activation_free(struct activation *a)
{
        struct launcher *l = a->l;

        detach_child(a, false);
        complete_waiters(a, 0, ERR_PREFIX "ServiceUnknown", "The service file was removed");
        if (a->timerfd >= 0)
                close(a->timerfd);
        if (a->pool)
                munmap(a->pool, ACTIVATOR_POOL_SIZE);
        if (a->fd >= 0) {
                epoll_ctl(l->epfd, EPOLL_CTL_DEL, a->fd, NULL);
                close(a->fd);
        }
        free(a->name);
        service_strv_free(a->argv);
        free(a->user);
        free(a->err_name);
        free(a->err_message);
        free(a);
}

/* the connection id owning @name, or 0 */
static uint64_t name_owner(struct launcher *l, const char *name)
{
        size_t size = sizeof(struct kdbus_cmd_info) + ALIGN8(ITEM_HEADER + strlen(name) + 1);
        struct kdbus_cmd_info *ci = calloc(1, size);
        uint64_t id = 0;

        if (!ci)
                return 0;
        ci->size = size;
        item_append(ci->items, KDBUS_ITEM_NAME, name, strlen(name) + 1);
        if (kioctl(l->watcher_fd, KDBUS_CMD_CONN_INFO, ci) == 0) {
                id = ((const struct kdbus_info *)((char *)l->watcher_pool + ci->offset))->id;
                kfree_slice(l->watcher_fd, ci->offset);
        }
        free(ci);
        return id;
}

static int activation_new(struct launcher *l, const struct service_entry *e)
{
        struct activation *a = calloc(1, sizeof(*a));
        struct epoll_event ev;
        uid_t owner = getuid();
        char desc[300];
        int r;

        if (!a)
                return -ENOMEM;
        a->l = l;
        a->fd = -1;
        a->timerfd = -1;
        a->src_fd = (struct source){ SRC_ACTIVATOR, a };
        a->src_timer = (struct source){ SRC_TIMER, a };
        a->name = strdup(e->name);
        a->user = e->user ? strdup(e->user) : NULL;
        if (!a->name || (e->user && !a->user) || strv_copy(e->argv, &a->argv) < 0) {
                activation_free(a);
                return -ENOMEM;
        }
        if (l->type == SERVICE_BUS_SYSTEM) {
                struct passwd *pw = lookup_user(e->user);

                if (!pw) {
                        fprintf(stderr, "kdbus-launcher: %s: skipped: unknown User=%s\n",
                                e->path, e->user);
                        activation_free(a);
                        return 0;
                }
                owner = pw->pw_uid;
        }
        /* a sysname: letters, digits, _ - . only */
        snprintf(desc, sizeof(desc), "activator-%s", e->name);
        r = hello(l->bus_path, KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_ACCEPT_FD,
                  ACTIVATOR_POOL_SIZE, e->name, owner, desc, &a->fd, &a->pool, &a->id);
        if (r < 0) {
                fprintf(stderr, "kdbus-launcher: %s: no activator for %s: %s\n", e->path,
                        e->name, r == -EEXIST ? "another activator holds the name" : strerror(-r));
                activation_free(a);
                return r == -ENOMEM ? r : 0;
        }
        ev = (struct epoll_event){ .events = 0, .data.ptr = &a->src_fd };
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, a->fd, &ev);
        a->next = l->activations;
        l->activations = a;
        /* a service may already own the name (launcher restart) */
        if (name_owner(l, a->name) != a->id) {
                a->state = LAUNCHER_RUNNING;
        } else {
                a->state = LAUNCHER_IDLE;
                watch(a, true);
        }
        logf_(l, "%s: activator %llu from %s (%s)", a->name, (unsigned long long)a->id, e->path,
              launcher_state_name(a->state));
        return 0;
}

int launcher_reload(struct launcher *l)
{
        struct service_table t = { 0 };
        char **dirs;
        int r;

        r = service_dirs(l->type, l->extra_dirs, &dirs);
        if (r < 0)
                return r;
        r = service_table_load(l->type, dirs, false, &t);
        service_strv_free(dirs);
        if (r < 0)
                return r;
        for (struct activation **p = &l->activations; *p;) {
                struct activation *a = *p;
                const struct service_entry *e = service_table_find(&t, a->name);
                char **argv;

                if (!e) {
                        logf_(l, "%s: service file removed, activator closed", a->name);
                        *p = a->next;
                        activation_free(a);
                        continue;
                }
                if (strv_copy(e->argv, &argv) == 0) {
                        service_strv_free(a->argv);
                        a->argv = argv;
                }
                if (e->user) {
                        char *u = strdup(e->user);

                        if (u) {
                                free(a->user);
                                a->user = u;
                        }
                }
                p = &a->next;
        }
        for (size_t i = 0; i < t.n_entries && r == 0; i++)
                if (!find_activation(l, t.entries[i].name))
                        r = activation_new(l, &t.entries[i]);
        service_table_free(&t);
        state_write(l);
        return r;
}

int launcher_new(struct launcher **ret, const char *bus_path, enum service_bus_type type,
                 char *const *extra_dirs)
{
        struct launcher *l = calloc(1, sizeof(*l));
        struct epoll_event ev;
        size_t match_size = sizeof(struct kdbus_cmd_match) +
                            ALIGN8(ITEM_HEADER + sizeof(struct kdbus_notify_name_change));
        struct kdbus_cmd_match *match = NULL;
        struct kdbus_notify_name_change any = {
                .old_id = { .id = KDBUS_MATCH_ID_ANY }, .new_id = { .id = KDBUS_MATCH_ID_ANY },
        };
        uint64_t id;
        int r;

        if (!l)
                return -ENOMEM;
        l->epfd = -1;
        l->watcher_fd = -1;
        l->type = type;
        l->verbose = true;
        l->timeout_msec = type == SERVICE_BUS_SYSTEM ? 25000 : 120000;
        l->src_watcher = (struct source){ SRC_WATCHER, l };
        l->bus_path = strdup(bus_path);
        r = -ENOMEM;
        if (!l->bus_path || strv_copy(extra_dirs, &l->extra_dirs) < 0 ||
            asprintf(&l->starter_address, "kernel:path=%s", bus_path) < 0) {
                l->starter_address = NULL;
                goto fail;
        }
        l->env = calloc(1, sizeof(*l->env));
        if (!l->env)
                goto fail;
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                r = -errno;
                goto fail;
        }
        r = hello(bus_path, 0, WATCHER_POOL_SIZE, NULL, 0, "kdbus-launcher", &l->watcher_fd,
                  &l->watcher_pool, &id);
        if (r < 0)
                goto fail;
        match = calloc(1, match_size);
        if (!match) {
                r = -ENOMEM;
                goto fail;
        }
        match->size = match_size;
        match->cookie = 1;
        item_append(match->items, KDBUS_ITEM_NAME_CHANGE, &any, sizeof(any));
        r = kioctl(l->watcher_fd, KDBUS_CMD_MATCH_ADD, match);
        free(match);
        if (r < 0)
                goto fail;
        ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &l->src_watcher };
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->watcher_fd, &ev) < 0) {
                r = -errno;
                goto fail;
        }
        r = launcher_reload(l);
        if (r < 0)
                goto fail;
        *ret = l;
        return 0;
fail:
        launcher_free(l);
        return r;
}

void launcher_free(struct launcher *l)
{
        if (!l)
                return;
        while (l->activations) {
                struct activation *a = l->activations;

                l->activations = a->next;
                activation_free(a);
        }
        /* children are not killed: services outlive a launcher restart */
        while (l->children) {
                struct child *c = l->children;

                l->children = c->next;
                if (c->pidfd >= 0)
                        close(c->pidfd);
                close(c->errpipe);
                free(c);
        }
        if (l->watcher_pool)
                munmap(l->watcher_pool, WATCHER_POOL_SIZE);
        if (l->watcher_fd >= 0)
                close(l->watcher_fd);
        if (l->epfd >= 0)
                close(l->epfd);
        free(l->bus_path);
        service_strv_free(l->extra_dirs);
        service_strv_free(l->env);
        free(l->starter_address);
        free(l->state_file);
        free(l);
}

int launcher_set_starter_address(struct launcher *l, const char *address)
{
        char *s = strdup(address);

        if (!s)
                return -ENOMEM;
        free(l->starter_address);
        l->starter_address = s;
        return 0;
}

void launcher_set_timeout(struct launcher *l, unsigned int msec)
{
        l->timeout_msec = msec ?: 1;
}

void launcher_set_verbose(struct launcher *l, bool verbose)
{
        l->verbose = verbose;
}

int launcher_set_state_file(struct launcher *l, const char *path)
{
        char *s = strdup(path);

        if (!s)
                return -ENOMEM;
        free(l->state_file);
        l->state_file = s;
        state_write(l);
        return 0;
}

int launcher_get_fd(const struct launcher *l)
{
        return l->epfd;
}

int launcher_start_service(struct launcher *l, const char *name, launcher_start_cb cb,
                           void *userdata)
{
        struct activation *a = find_activation(l, name);
        struct waiter *w;

        if (!a)
                return -ESRCH;
        watcher_drain(l);
        if (a->state == LAUNCHER_RUNNING) {
                cb(userdata, 2, NULL, NULL);
                return 0;
        }
        if (a->state == LAUNCHER_FAILED && now_msec() < a->failed_until) {
                cb(userdata, 0, a->err_name ?: ERR_PREFIX "Spawn.Failed",
                   a->err_message ?: "activation is rate limited");
                return 0;
        }
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->cb = cb;
        w->userdata = userdata;
        w->next = a->waiters;
        a->waiters = w;
        if (a->state != LAUNCHER_STARTING) {
                a->state = LAUNCHER_IDLE;
                logf_(l, "%s: StartServiceByName", a->name);
                activation_start(a);
        }
        return 0;
}

void launcher_cancel(struct launcher *l, void *userdata)
{
        for (struct activation *a = l->activations; a; a = a->next) {
                for (struct waiter **p = &a->waiters; *p;) {
                        struct waiter *w = *p;

                        if (w->userdata == userdata) {
                                *p = w->next;
                                free(w);
                        } else {
                                p = &w->next;
                        }
                }
        }
}

int launcher_update_environment(struct launcher *l, const char *const *pairs)
{
        for (; pairs && pairs[0] && pairs[1]; pairs += 2) {
                size_t kl = strlen(pairs[0]), n = 0;
                char *kv, **env;
                bool replaced = false;

                if (!kl || strchr(pairs[0], '='))
                        return -EINVAL;
                if (asprintf(&kv, "%s=%s", pairs[0], pairs[1]) < 0)
                        return -ENOMEM;
                for (char **e = l->env; *e; e++, n++) {
                        if (!strncmp(*e, kv, kl + 1)) {
                                free(*e);
                                *e = kv;
                                replaced = true;
                                break;
                        }
                }
                if (replaced)
                        continue;
                env = realloc(l->env, (n + 2) * sizeof(*env));
                if (!env) {
                        free(kv);
                        return -ENOMEM;
                }
                env[n] = kv;
                env[n + 1] = NULL;
                l->env = env;
        }
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int launcher_list_names(struct launcher *l, char ***ret)
{
        size_t n = 0, i = 0;
        char **v;

        for (struct activation *a = l->activations; a; a = a->next)
                n++;
        v = calloc(n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (struct activation *a = l->activations; a; a = a->next) {
                v[i] = strdup(a->name);
                if (!v[i++]) {
                        service_strv_free(v);
                        return -ENOMEM;
                }
        }
        qsort(v, n, sizeof(*v), cmp_str);
        *ret = v;
        return 0;
}

int launcher_get_state(struct launcher *l, const char *name)
{
        struct activation *a = find_activation(l, name);

        if (!a)
                return -ESRCH;
        if (a->state == LAUNCHER_FAILED && now_msec() >= a->failed_until)
                return LAUNCHER_IDLE;
        return a->state;
}

const char *launcher_last_error(struct launcher *l, const char *name, const char **message)
{
        struct activation *a = find_activation(l, name);

        if (!a || !a->err_name)
                return NULL;
        if (message)
                *message = a->err_message;
        return a->err_name;
}
