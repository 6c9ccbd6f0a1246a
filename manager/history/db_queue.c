/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/db_queue.c - the bounded hand-over of run history records from
 * the loop thread to the writer thread (manager/history/db_queue.h): a linked FIFO
 * under one mutex, one condition variable for both directions (records
 * arrived, records finished).
 */
#include "manager/history/db_queue.h"

#include <errno.h>
#include <stdlib.h>

int mgr_dbq_init(struct mgr_dbq *q, size_t max_bytes)
{
    int r;

    *q = (struct mgr_dbq){.max_bytes = max_bytes};
    r = pthread_mutex_init(&q->mu, NULL);
    if (r)
        return -r;
    r = pthread_cond_init(&q->cv, NULL);
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
        if (q->waiting && ((flags & MGR_DBQ_WAKE) || q->queued >= MGR_DBQ_WAKE_COUNT)) {
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
    /* An awake consumer takes whatever is queued; a waiting one is woken
     * by a push that asks for it, enough records, a drain or the close. */
    while (!q->head && !q->closed) {
        q->waiting = true;
        pthread_cond_wait(&q->cv, &q->mu);
    }
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

void mgr_dbq_drain(struct mgr_dbq *q)
{
    pthread_mutex_lock(&q->mu);
    uint64_t want = q->pushed;
    if (q->waiting) {
        q->waiting = false;
        pthread_cond_broadcast(&q->cv);
    }
    while (q->done < want)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

void mgr_dbq_close(struct mgr_dbq *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}
