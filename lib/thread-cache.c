// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Memory a thread keeps from one message for the next.
 *
 * Large buffers. Every message of 64 KiB or more passes through a few
 * buffers of its size: the body writer's, the sealed message's, a
 * received message's. glibc serves such blocks from the top of the heap
 * or with mmap() and gives them back on free() (heap trimming above
 * 128 KiB, munmap()), so each message paid brk()/mmap(), munmap() and a
 * page fault with page clearing per 4 KiB it touched: more than the
 * copies themselves (Documentation/performance.md, "Large bodies through
 * libkdbus"). A thread keeps the last few such blocks for its next
 * message instead: at most THREAD_CACHE_KEEP_TOTAL bytes, no block above
 * THREAD_CACHE_KEEP_MAX. They are plain malloc() blocks whose capacity
 * malloc_usable_size() reads, so the two allocators mix freely: nothing
 * records which one a block came from.
 *
 * The spare message object. The object of the last message dropped on
 * this thread (or one a connection's spares had no room for) serves the
 * thread's next message: a client's reply goes to the application, which
 * drops it, and the next call's reply is made on it instead of
 * malloc()/free() (message.c poisons it for AddressSanitizer meanwhile).
 *
 * A thread that keeps anything sets a key whose destructor frees it all
 * when the thread exits; from then on (KEEP_OFF) nothing is kept, nor
 * after the library's destructor, which frees the calling thread's and
 * deletes the key.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "thread-cache.h"

#define KEEP_SLOTS    4

enum { KEEP_NEW, KEEP_ON, KEEP_OFF };

static __thread void *kept[KEEP_SLOTS];
static __thread size_t kept_size[KEEP_SLOTS];
static __thread size_t kept_total;
static __thread void *spare;
static __thread unsigned char keep_state;
static pthread_key_t keep_key;
static pthread_once_t keep_once = PTHREAD_ONCE_INIT;
static bool keep_key_made;

static void keep_exit(void *unused)
{
        (void)unused;
        for (size_t i = 0; i < KEEP_SLOTS; i++) {
                free(kept[i]);
                kept[i] = NULL;
                kept_size[i] = 0;
        }
        kept_total = 0;
        free(spare);
        spare = NULL;
        keep_state = KEEP_OFF;
}

static void keep_key_make(void)
{
        keep_key_made = pthread_key_create(&keep_key, keep_exit) == 0;
}

__attribute__((destructor)) static void keep_unload(void)
{
        keep_exit(NULL);
        if (keep_key_made)
                pthread_key_delete(keep_key);
}

/* may this thread keep memory? Sets up its destructor the first time */
static bool keep_armed(void)
{
        if (keep_state == KEEP_NEW) {
                /* the key's value only makes its destructor run */
                pthread_once(&keep_once, keep_key_make);
                if (!keep_key_made || pthread_setspecific(keep_key, &kept_total) != 0)
                        keep_state = KEEP_OFF;
                else
                        keep_state = KEEP_ON;
        }
        return keep_state == KEEP_ON;
}

void *thread_cache_get(size_t size, size_t *usable)
{
        size_t best = KEEP_SLOTS;
        void *p;

        if (size >= THREAD_CACHE_KEEP_MIN / 2) {
                /* the smallest kept block that fits */
                for (size_t i = 0; i < KEEP_SLOTS; i++)
                        if (kept[i] && kept_size[i] >= size &&
                            (best == KEEP_SLOTS || kept_size[i] < kept_size[best]))
                                best = i;
        }
        if (best < KEEP_SLOTS) {
                p = kept[best];
                kept[best] = NULL;
                kept_total -= kept_size[best];
                kept_size[best] = 0;
        } else {
                p = malloc(size ? size : 1);
                if (!p)
                        return NULL;
        }
        if (usable)
                *usable = malloc_usable_size(p);
        return p;
}

void thread_cache_put(void *p)
{
        size_t size, slot = KEEP_SLOTS;

        if (!p)
                return;
        size = malloc_usable_size(p);
        if (size < THREAD_CACHE_KEEP_MIN || size > THREAD_CACHE_KEEP_MAX || !keep_armed())
                goto out_free;
        /* an empty slot, else the smallest block if @p is larger */
        for (size_t i = 0; i < KEEP_SLOTS; i++) {
                if (!kept[i]) {
                        slot = i;
                        break;
                }
                if (kept_size[i] < size && (slot == KEEP_SLOTS || kept_size[i] < kept_size[slot]))
                        slot = i;
        }
        if (slot == KEEP_SLOTS)
                goto out_free;
        if (kept[slot]) {
                kept_total -= kept_size[slot];
                free(kept[slot]);
                kept[slot] = NULL;
                kept_size[slot] = 0;
        }
        /* over the total: drop others, smallest first, while @p still fits */
        while (kept_total + size > THREAD_CACHE_KEEP_TOTAL) {
                size_t drop = KEEP_SLOTS;

                for (size_t i = 0; i < KEEP_SLOTS; i++)
                        if (kept[i] && (drop == KEEP_SLOTS || kept_size[i] < kept_size[drop]))
                                drop = i;
                if (drop == KEEP_SLOTS)
                        goto out_free;
                kept_total -= kept_size[drop];
                free(kept[drop]);
                kept[drop] = NULL;
                kept_size[drop] = 0;
        }
        kept[slot] = p;
        kept_size[slot] = size;
        kept_total += size;
        return;

out_free:
        free(p);
}

size_t thread_cache_kept(void)
{
        return kept_total;
}

void *thread_cache_take_spare(void)
{
        void *obj = spare;

        spare = NULL;
        return obj;
}

bool thread_cache_keep_spare(void *obj)
{
        if (spare || !keep_armed())
                return false;
        spare = obj;
        return true;
}

bool thread_cache_has_spare(void)
{
        return spare != NULL;
}
