// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The per-thread large buffers of libkdbus (lib/thread-cache.c): a large block
 * is kept for the thread's next message and handed out again, small and
 * huge ones are not, a thread keeps a bounded amount, a thread's blocks
 * are freed when it exits (AddressSanitizer's leak check fails the test
 * otherwise), and messages built and parsed with large bodies reuse them.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "thread-cache.h"
#include "message.h"
#include "tap.h"

static void test_keep(void)
{
        size_t usable = 0;
        void *p, *q;

        p = thread_cache_get(1000, &usable);
        tap_ok(p && usable >= 1000, "a small block is allocated");
        thread_cache_put(p);
        tap_ok(thread_cache_kept() == 0, "a small block is not kept");

        p = thread_cache_get(128 * 1024, &usable);
        tap_ok(p && usable >= 128 * 1024, "a large block is allocated");
        memset(p, 0xa5, 128 * 1024);
        thread_cache_put(p);
        tap_ok(thread_cache_kept() >= 128 * 1024, "a large block is kept (%zu bytes)", thread_cache_kept());
        q = thread_cache_get(100 * 1024, &usable);
        tap_ok(q == p && usable >= 128 * 1024, "the kept block serves the next large request");
        tap_ok(thread_cache_kept() == 0, "and is no longer kept");
        /* plain free() of a kept block is allowed */
        free(q);

        p = thread_cache_get(THREAD_CACHE_KEEP_MAX + 4096, NULL);
        thread_cache_put(p);
        tap_ok(thread_cache_kept() == 0, "a block above THREAD_CACHE_KEEP_MAX is not kept");
        thread_cache_put(NULL);
        tap_ok(thread_cache_kept() == 0, "thread_cache_put(NULL) does nothing");
}

static void test_bounded(void)
{
        void *p[6];
        size_t i;

        for (i = 0; i < 6; i++)
                p[i] = thread_cache_get(3 * 1024 * 1024, NULL);
        for (i = 0; i < 6; i++)
                thread_cache_put(p[i]);
        tap_ok(thread_cache_kept() > 0 && thread_cache_kept() <= THREAD_CACHE_KEEP_TOTAL,
               "six blocks of 3 MiB: %zu bytes kept, at most THREAD_CACHE_KEEP_TOTAL", thread_cache_kept());
        /* a small request does not hold a big block back from malloc's bins */
        p[0] = thread_cache_get(512, NULL);
        tap_ok(thread_cache_kept() > 0, "a small request takes no kept block");
        free(p[0]);
        while (thread_cache_kept() > 0)
                free(thread_cache_get(THREAD_CACHE_KEEP_MIN, NULL));
        tap_ok(thread_cache_kept() == 0, "all kept blocks handed out");
}

static void *thread_keeps(void *arg)
{
        (void)arg;
        thread_cache_put(thread_cache_get(256 * 1024, NULL));
        return (void *)(uintptr_t)(thread_cache_kept() > 0);
}

static void test_thread(void)
{
        pthread_t t;
        void *kept = NULL;

        tap_ok(pthread_create(&t, NULL, thread_keeps, NULL) == 0 && pthread_join(t, &kept) == 0 &&
               kept, "a thread keeps its own block (freed at its exit: no leak reported)");
        tap_ok(thread_cache_kept() == 0, "another thread's blocks are not this one's");
}

static bool round_trip(size_t n, uint8_t fill)
{
        struct kdbus_message *m = NULL, *p = NULL;
        const void *data, *got;
        size_t size, got_n;
        uint8_t *body = malloc(n);
        bool ok;

        if (!body)
                return false;
        memset(body, fill, n);
        ok = kdbus_message_new_method_call(&m, "org.t", "/org/t", "org.t", "Echo") >= 0 &&
             kdbus_message_append_array(m, 'y', body, n) >= 0 &&
             kdbus_message_seal(m, 7, ":1.1") >= 0 &&
             kdbus_message_get_data(m, &data, &size) == 0 &&
             kdbus_message_parse(&p, data, size) >= 0 &&
             kdbus_message_read_array(p, 'y', &got, &got_n) >= 0 &&
             got_n == n && memcmp(got, body, n) == 0;
        kdbus_message_unref(m);
        kdbus_message_unref(p);
        free(body);
        return ok;
}

static void test_messages(void)
{
        tap_ok(round_trip(200 * 1024, 0x11), "a 200 KiB body is built, sealed and parsed");
        tap_ok(thread_cache_kept() >= 200 * 1024, "its buffers are kept afterwards (%zu bytes)",
               thread_cache_kept());
        tap_ok(round_trip(300 * 1024, 0x22) && round_trip(64 * 1024, 0x33) &&
               round_trip(1024 * 1024, 0x44) && round_trip(200 * 1024, 0x55),
               "bodies of other sizes on kept buffers keep their bytes");
        tap_ok(thread_cache_kept() <= THREAD_CACHE_KEEP_TOTAL, "still at most THREAD_CACHE_KEEP_TOTAL kept");
}

int main(void)
{
        tap_plan(8 + 3 + 2 + 4);
        test_keep();
        test_bounded();
        test_thread();
        test_messages();
        return tap_done();
}
