/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/db_queue.h - the run history's hand-over between the loop thread
 * and its writer thread (manager/sinks/db.c): a FIFO of records bounded by
 * their bytes, one mutex and one condition variable.
 *
 * The producer (the loop) never waits: a push over the bound is refused and
 * counted, unless the record is one that must not be lost (a test's begin
 * or end, a few per test), which always goes in. The consumer (the writer)
 * takes every queued record at once and hands them back as it finishes
 * them, so the bound holds what is queued or being written. Finished records
 * are freed by the producer at its next push: memory the loop allocated is
 * freed on the loop's thread, not in contention with it for malloc's arena.
 *
 * A waiting consumer is woken by a push that asks for it (the end of a
 * batch: an interval's ALL row, a flush, a test's begin or end) or once
 * MGR_DBQ_WAKE_COUNT records wait, not by every push: at 10,000 agents a
 * wake-up per row was a futex call and a context switch per row on the
 * loop's side.
 *
 * A hold (mgr_dbq_hold) keeps the consumer waiting whatever is pushed, until
 * it is lifted, a drain or the close, or the records held pass its bound:
 * the run history writes nothing while a test is measured.
 */
#ifndef IOF_MANAGER_HISTORY_DB_QUEUE_H
#define IOF_MANAGER_HISTORY_DB_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The head of a record; the record is allocated by the producer and owned
 * by the queue, then by the consumer that took it. */
struct mgr_dbq_item {
    struct mgr_dbq_item *next;
    size_t bytes; /* what the record holds against the bound */
};

/* Records queued before a waiting consumer is woken without being asked. */
#define MGR_DBQ_WAKE_COUNT 256

/* mgr_dbq_push's flags. */
enum {
    MGR_DBQ_MUST = 1 << 0, /* never refused, even past the bound */
    MGR_DBQ_WAKE = 1 << 1, /* wake the consumer now */
};

struct mgr_dbq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct mgr_dbq_item *head, *tail;
    struct mgr_dbq_item *spent; /* finished, for the next push to free */
    size_t queued;              /* records queued, not yet taken */
    bool waiting;               /* the consumer waits in mgr_dbq_take */
    size_t max_bytes;
    size_t bytes;      /* queued or being written */
    size_t peak_bytes; /* the most bytes ever held */
    uint64_t pushed;   /* records accepted */
    uint64_t done;     /* records the consumer finished (mgr_dbq_release) */
    uint64_t refused;  /* pushes refused over the bound */
    bool closed;
    bool held;        /* mgr_dbq_hold: the consumer is not woken */
    size_t hold_max;  /* bytes from which a hold gives way */
    uint64_t spilled; /* takes a hold gave way to, past hold_max */
};

/* 0, or -errno when the mutex or condition variable cannot be made. */
int mgr_dbq_init(struct mgr_dbq *q, size_t max_bytes);
/* Frees whatever is still queued or finished (with free()) and the
 * primitives. */
void mgr_dbq_destroy(struct mgr_dbq *q);

/* Takes it and returns 0; or, when it would take the queue past max_bytes
 * and flags lack MGR_DBQ_MUST, returns -ENOBUFS, counts the refusal and
 * leaves it to the caller. Never waits but for the mutex. After
 * mgr_dbq_close: -EPIPE. MGR_DBQ_WAKE wakes a waiting consumer. Frees (with
 * free()) the records the consumer has finished since the last push. */
int mgr_dbq_push(struct mgr_dbq *q, struct mgr_dbq_item *it, unsigned flags);

/* Waits until records are queued or the queue is closed; returns every
 * queued record, oldest first (linked by next; the caller owns them), or
 * NULL once the queue is closed and empty. */
struct mgr_dbq_item *mgr_dbq_take(struct mgr_dbq *q);

/* The consumer finished the records of `done` (linked by next, the last's
 * NULL): their bytes go back to the bound, and the queue owns them again
 * (the next push frees them). */
void mgr_dbq_release(struct mgr_dbq *q, struct mgr_dbq_item *done);

/* Lifts a hold, wakes the consumer and waits until it has finished every
 * record pushed before the call (a barrier for tests, before a test's
 * start and at the end of a run). */
void mgr_dbq_drain(struct mgr_dbq *q);
/* mgr_dbq_drain waiting at most timeout_ns (0: no bound): 0, or -ETIMEDOUT
 * when the consumer had not finished by then (it goes on, unheld). */
int mgr_dbq_drain_for(struct mgr_dbq *q, uint64_t timeout_ns);

/* on: from now the consumer takes nothing until the hold is lifted (on
 * false), mgr_dbq_drain or mgr_dbq_close, unless max_bytes or more are
 * queued (counted in spilled); off: a waiting consumer takes what was held. */
void mgr_dbq_hold(struct mgr_dbq *q, bool on, size_t max_bytes);

/* No more pushes; mgr_dbq_take returns what is left, then NULL. */
void mgr_dbq_close(struct mgr_dbq *q);

#endif
