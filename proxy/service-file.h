/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * D-Bus service files (activation, Documentation/activation.md): the directories of
 * the system and user bus, the desktop-entry format of the
 * [D-BUS Service] group, Exec= word splitting, the naming rule and the
 * priorities. Invalid files are skipped with a warning on stderr.
 */

#include <stdbool.h>
#include <stddef.h>

enum service_bus_type {
        SERVICE_BUS_SYSTEM,
        SERVICE_BUS_USER,
};

struct service_entry {
        char *name;             /* the well-known name */
        char **argv;            /* Exec= split into words, NULL-terminated */
        char *user;             /* User= (system bus), NULL when unset */
        char *systemd_service;  /* SystemdService=, NULL when unset */
        char *path;             /* the file it came from */
        unsigned int priority;  /* index of its directory, 0 is highest */
};

struct service_table {
        struct service_entry *entries;  /* sorted by name */
        size_t n_entries;
};

/* true for a valid well-known bus name (not a unique name) */
bool service_name_is_valid(const char *name);

/*
 * Split an Exec= value into words (no expansion). Returns 0 and a
 * NULL-terminated vector, -EINVAL for an unterminated quote, a trailing
 * backslash or no word at all, -ENOMEM.
 */
int service_exec_split(const char *value, char ***ret_argv);

/*
 * Parse one service file's text. @filename is its basename (the naming
 * rule). Returns 0, or -EINVAL with *why set to a static explanation.
 * With @systemd_activation false an entry without a usable Exec= (only
 * SystemdService=, Exec=/bin/false) is -ENOENT: not activatable.
 */
int service_file_parse(const char *text, size_t len, const char *filename,
                       enum service_bus_type type, bool systemd_activation,
                       struct service_entry *ret, const char **why);

/*
 * The search directories for @type, highest priority first, followed by
 * @extra (NULL-terminated or NULL). Uses $XDG_RUNTIME_DIR, $XDG_DATA_HOME,
 * $HOME and $XDG_DATA_DIRS for the user bus.
 */
int service_dirs(enum service_bus_type type, char *const *extra, char ***ret_dirs);

/* read every *.service of @dirs (priority order) into @ret */
int service_table_load(enum service_bus_type type, char *const *dirs,
                       bool systemd_activation, struct service_table *ret);
const struct service_entry *service_table_find(const struct service_table *t,
                                               const char *name);
void service_entry_free(struct service_entry *e);
void service_table_free(struct service_table *t);
void service_strv_free(char **strv);
