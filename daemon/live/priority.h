/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * priority.h - the event reader's scheduling priority.
 *
 * The daemon is one task among the host's: in the same autogroup or cgroup
 * as a load of hundreds of runnable tasks, a nice-0 reader gets 1/N of the
 * CPU and falls behind the ring buffer, which then drops events.  The
 * thread that drains the source runs at the configured nice level (the
 * `nice` key, default CONFIG_NICE_DEFAULT); threads and processes it starts
 * later (the flight recorder's writer, alert hooks) go back to the level
 * the daemon was started with.  Linux nice levels are per thread.
 */
#ifndef IMB_PRIORITY_H
#define IMB_PRIORITY_H

/**
 * priority_raise - set the calling thread's nice level to @nice
 * @err: 256 bytes, the reason when it could not (EPERM without CAP_SYS_NICE)
 *
 * Remembers the level the thread had before, for priority_restore_self().
 * Returns 0 or -errno; on failure the level stays as it was.
 */
int priority_raise(int nice, char *err);

/**
 * priority_restore_self - give the calling thread the level the daemon
 * had before priority_raise(); async-signal-safe (for a forked child)
 */
void priority_restore_self(void);

#endif /* IMB_PRIORITY_H */
