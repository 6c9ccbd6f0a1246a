/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/db_queue.c - the bounded hand-over of run history records from
 * the loop thread to the writer thread (manager/history/db_queue.h): a linked FIFO
 * under one mutex, one condition variable for both directions (records
 * arrived, records finished).
 */
#include "manager/history/db_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

int mgr_dbq_init(struct mgr_dbq *q, size_t max_bytes)
{
    int r;

    *q = (struct mgr_dbq){.max_bytes = max_bytes};
    r = pthread_mutex_init(&q->mu, NULL);
    if (r)
        return -r;
    pthread_condattr_t ca;
    r = pthread_condattr_init(&ca);
    if (!r) {
        /* mgr_dbq_drain_for's bound is on the monotonic clock. */
        r = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        if (!r)
            r = pthread_cond_init(&q->cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (r) {
        pthread_mutex_destroy(&q->mu);
        return -r;
    }
    return 0;
}

static void free_list(struct mgr_dbq_item *it)
{
    while (it) {
        struct mgr_dbq_item *next = it->next;
        free(it);
        it = next;
    }
}

void mgr_dbq_destroy(struct mgr_dbq *q)
{
    free_list(q->head);
    free_list(q->spent);
    q->head = q->spent = NULL;
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
}

int mgr_dbq_push(struct mgr_dbq *q, struct mgr_dbq_item *it, unsigned flags)
{
    struct mgr_dbq_item *spent;
    int r = 0;

    it->next = NULL;
    pthread_mutex_lock(&q->mu);
    spent = q->spent;
    q->spent = NULL;
    if (q->closed) {
        r = -EPIPE;
    } else if (!(flags & MGR_DBQ_MUST) && q->bytes + it->bytes > q->max_bytes) {
        q->refused++;
        r = -ENOBUFS;
    } else {
        if (q->tail)
            q->tail->next = it;
        else
            q->head = it;
        q->tail = it;
        q->bytes += it->bytes;
        if (q->bytes > q->peak_bytes)
            q->peak_bytes = q->bytes;
        q->pushed++;
        q->queued++;
        if (q->waiting && (q->held ? q->bytes >= q->hold_max
                                   : (flags & MGR_DBQ_WAKE) || q->queued >= MGR_DBQ_WAKE_COUNT)) {
            q->waiting = false;
            pthread_cond_broadcast(&q->cv);
        }
    }
    pthread_mutex_unlock(&q->mu);
    free_list(spent);
    return r;
}

struct mgr_dbq_item *mgr_dbq_take(struct mgr_dbq *q)
{
    struct mgr_dbq_item *list;

    pthread_mutex_lock(&q->mu);
    /* An awake consumer takes whatever is queued, unless held; a waiting
     * one is woken by a push that asks for it, enough records, the end of a
     * hold, a drain or the close. */
    while (!q->closed && (!q->head || (q->held && q->bytes < q->hold_max))) {
        q->waiting = true;
        pthread_cond_wait(&q->cv, &q->mu);
    }
    if (q->held && q->head)
        q->spilled++;
    q->waiting = false;
    list = q->head;
    q->head = q->tail = NULL;
    q->queued = 0;
    pthread_mutex_unlock(&q->mu);
    return list;
}

void mgr_dbq_release(struct mgr_dbq *q, struct mgr_dbq_item *done)
{
    struct mgr_dbq_item *last = done;
    size_t bytes = 0;
    uint64_t n = 0;

    if (!done)
        return;
    for (struct mgr_dbq_item *it = done; it; it = it->next) {
        bytes += it->bytes;
        n++;
        last = it;
    }
    pthread_mutex_lock(&q->mu);
    q->bytes -= bytes;
    q->done += n;
    last->next = q->spent;
    q->spent = done;
    if (q->done == q->pushed)
        pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void mgr_dbq_hold(struct mgr_dbq *q, bool on, size_t max_bytes)
{
    pthread_mutex_lock(&q->mu);
    q->held = on;
    q->hold_max = max_bytes;
    if (!on && q->waiting && q->head) {
        q->waiting = false;
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
}

int mgr_dbq_drain_for(struct mgr_dbq *q, uint64_t timeout_ns)
{
    struct timespec until;
    int r = 0;

    if (timeout_ns) {
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t)(timeout_ns / 1000000000u);
        until.tv_nsec += (long)(timeout_ns % 1000000000u);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&q->mu);
    uint64_t want = q->pushed;
    q->held = false;
    if (q->waiting) {
        q->waiting = false;
        pthread_cond_broadcast(&q->cv);
    }
    while (q->done < want) {
        if (!timeout_ns) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else if (pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT) {
            r = q->done < want ? -ETIMEDOUT : 0;
            break;
        }
    }
    pthread_mutex_unlock(&q->mu);
    return r;
}

void mgr_dbq_drain(struct mgr_dbq *q)
{
    (void)mgr_dbq_drain_for(q, 0);
}

void mgr_dbq_close(struct mgr_dbq *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = true;
    q->held = false;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}
