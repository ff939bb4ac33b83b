/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The activation launcher (Documentation/activation.md): one activator
 * connection per service name, a watcher connection for NAME_CHANGE
 * notifications, services started with fork/exec and followed through
 * pidfds, timers for the activation timeout and the rate limit.
 *
 * It lives in a host event loop: launcher_get_fd() is one descriptor
 * (an epoll instance) that becomes readable when launcher_dispatch() has
 * work. It installs no signal handlers and needs SIGCHLD not ignored;
 * SIGHUP handling is the host's: call launcher_reload().
 */

#include <stdbool.h>
#include <stddef.h>

#include "service-file.h"

struct launcher;

enum launcher_state {
        LAUNCHER_IDLE,          /* the activator holds the name */
        LAUNCHER_STARTING,      /* the service was started, it has not taken the name */
        LAUNCHER_RUNNING,       /* a real connection holds the name */
        LAUNCHER_FAILED,        /* rate limited: traffic is dropped, nothing started */
};

const char *launcher_state_name(enum launcher_state s);

/*
 * A StartServiceByName completion: @result 1 (started) or 2 (already
 * running), or 0 with @error_name/@error_message (a D-Bus error, e.g.
 * org.freedesktop.DBus.Error.Spawn.ChildExited).
 */
typedef void (*launcher_start_cb)(void *userdata, unsigned int result, const char *error_name,
                                  const char *error_message);

/*
 * @bus_path: the bus node; @type: system or user bus (directories, User=,
 * timeouts); @extra_dirs: <servicedir> entries (NULL-terminated or NULL).
 * Service files are read and activators created at once.
 */
int launcher_new(struct launcher **ret, const char *bus_path, enum service_bus_type type,
                 char *const *extra_dirs);
void launcher_free(struct launcher *l);

/* DBUS_STARTER_ADDRESS for started services (default kernel:path=<bus>) */
int launcher_set_starter_address(struct launcher *l, const char *address);
/* activation timeout, default 25 s (system) or 120 s (user) */
void launcher_set_timeout(struct launcher *l, unsigned int msec);
/* log each activation and failure to stderr (default on) */
void launcher_set_verbose(struct launcher *l, bool verbose);
/* write the name states to @path after every change (kdbusctl status) */
int launcher_set_state_file(struct launcher *l, const char *path);

int launcher_get_fd(const struct launcher *l);
/* handle everything that is ready; never blocks; negative errno on fatal error */
int launcher_dispatch(struct launcher *l);

/* re-read the service files: new activators, vanished ones closed */
int launcher_reload(struct launcher *l);

/*
 * StartServiceByName for @name. Returns 0 when @cb will be called
 * (possibly at once, from inside this call), -ESRCH when the name is
 * not activatable (ServiceUnknown), or another negative errno.
 */
int launcher_start_service(struct launcher *l, const char *name, launcher_start_cb cb,
                           void *userdata);
/* drop pending callbacks for @userdata (its requester went away) */
void launcher_cancel(struct launcher *l, void *userdata);

/* UpdateActivationEnvironment: @pairs is KEY, VALUE, KEY, VALUE, ..., NULL */
int launcher_update_environment(struct launcher *l, const char *const *pairs);

/* ListActivatableNames: the names with an activator (NULL-terminated, sorted) */
int launcher_list_names(struct launcher *l, char ***ret);

/* the state of @name, or -ESRCH */
int launcher_get_state(struct launcher *l, const char *name);
/* the error of the last failed attempt for @name (for REPLY_DEAD mapping), or NULL */
const char *launcher_last_error(struct launcher *l, const char *name, const char **message);
