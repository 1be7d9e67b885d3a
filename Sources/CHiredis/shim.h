#ifndef IDTOKENKIT_CHIREDIS_SHIM_H
#define IDTOKENKIT_CHIREDIS_SHIM_H

/* pkg-config's hiredis cflags put the hiredis include directory itself on the path (0.14 and 1.x alike). */
#include <hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

/* Swift cannot build a struct timeval portably (its field types differ between platforms): take milliseconds. */
static inline redisContext *idtk_redis_connect(const char *host, int port, long timeout_ms) {
    struct timeval tv;
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    return redisConnectWithTimeout(host, port, tv);
}

static inline int idtk_redis_set_timeout(redisContext *c, long timeout_ms) {
    struct timeval tv;
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    return redisSetTimeout(c, tv);
}

static inline int idtk_redis_failed(const redisContext *c) { return c->err; }
static inline const char *idtk_redis_error(const redisContext *c) { return c->errstr; }

/* redisCommand is variadic, which Swift cannot call: commands go through redisCommandArgv.
 *
 * hiredis writes to its socket with write(2), so a server that went away raises SIGPIPE, whose default action
 * ends the process. A library must not change the process's signal dispositions, so, as libpq does, SIGPIPE
 * is blocked in the calling thread for the duration of the command, and one that this command raised is
 * consumed before the mask is restored; the command then just fails with EPIPE. */
static inline redisReply *idtk_redis_command_argv(redisContext *c, int argc, const char **argv, const size_t *argvlen) {
    sigset_t sigpipe_only, old_mask, pending;
    sigemptyset(&sigpipe_only);
    sigaddset(&sigpipe_only, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_only, &old_mask);
    redisReply *reply = (redisReply *)redisCommandArgv(c, argc, argv, argvlen);
    if (!was_pending) {
        sigemptyset(&pending);
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) {
            int signal_number;
            sigwait(&sigpipe_only, &signal_number);
        }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return reply;
}

#endif
