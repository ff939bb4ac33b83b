/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Memory a thread keeps from one message for the next (thread-cache.c):
 * large buffers, and the object of the last message it dropped. Freed
 * when the thread exits or the library is unloaded.
 *
 * Large buffers are interchangeable with malloc()/free(): a block from
 * thread_cache_get() may be free()d, and thread_cache_put() takes any
 * malloc()ed block or NULL.
 */

/* smallest block worth keeping: below it malloc() serves from its bins */
#define THREAD_CACHE_KEEP_MIN           (64 * 1024)
/* largest block kept, and the most a thread keeps in all */
#define THREAD_CACHE_KEEP_MAX           (4 * 1024 * 1024)
#define THREAD_CACHE_KEEP_TOTAL         (8 * 1024 * 1024)

/* at least @size bytes (a kept block if one fits); *@usable: its capacity */
void *thread_cache_get(size_t size, size_t *usable);
/* keep @p for this thread's next large message, or free it */
void thread_cache_put(void *p);
/* bytes of large buffers this thread keeps (for the tests) */
size_t thread_cache_kept(void);

/* the kept message object, or NULL; the thread no longer keeps it */
void *thread_cache_take_spare(void);
/* keep @obj (a malloc()ed message object) if none is kept; false: free it */
bool thread_cache_keep_spare(void *obj);
bool thread_cache_has_spare(void);
