/*
 * tr_wfile.c - the trace file's bytes (tr_wfile.h): a buffer, gzip when the
 * name ends in .gz, writes that check the descriptor is still the file's (the
 * program may close it and reuse the number), and the end said once when the
 * file cannot be written on. Writer thread only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cushim/cushim_io.h"
#include "tr_wfile.h"

/* Is w->fd still the trace file? The program may close every descriptor (a daemon's start-up does) and open
   a file of its own that gets the same number: nothing may then be written to it or closed. The file is
   recognised by its device and inode, checked before every write (one fstat per 256 KiB of JSON) and before
   the close. 'reopen': when it is not, open the path again (without truncating; never creating it), check
   that it is the same file, and go on at our offset; a file that was removed or replaced ends the trace there
   (fd_lost). Left: a close and a reuse of the number between the check and the write that follows it. */
int tw_fd_ours(tr_writer *w, int reopen)
{
    struct stat st;
    int fd;
    if (w->fd >= 0 && fstat(w->fd, &st) == 0 && st.st_dev == w->fd_dev && st.st_ino == w->fd_ino)
        return 1;
    w->fd = -1;   /* not ours any more: the number is the program's */
    if (!reopen || w->fd_lost || w->fd_path == NULL)
        return 0;
    /* the same file or nothing: the check below. O_NONBLOCK: a FIFO (the trace's, its reader gone, or one put in
       its place) fails at once (ENXIO) instead of holding the program's thread; writes block again below. */
    fd = open(w->fd_path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != w->fd_dev || st.st_ino != w->fd_ino ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
        (S_ISREG(st.st_mode) && lseek(fd, w->fd_off, SEEK_SET) != w->fd_off)) {   /* a pipe has no offset */
        if (fd >= 0)
            close(fd);
        w->fd_lost = 1;
        return 0;
    }
    if (S_ISREG(st.st_mode))
        (void)flock(fd, LOCK_EX | LOCK_NB);   /* the lock went with the closed descriptor: ours again if free */
    w->fd = fd;
    w->fd_reopened++;
    return 1;
}

/* The file cannot be written on (err: the errno; 0 when the descriptor is no longer the file's, tw_fd_ours): the
   trace ends there. Said once, when it happens (w->on_error: the plugin's log, so also with summary=0), and again
   in the summary - a file cut short is never left unannounced. */
static void tw_io_fail(tr_writer *w, int err)
{
    char msg[512];
    if (w->io_error)
        return;
    w->io_error = 1;
    w->io_errno = err;
    if (w->on_error == NULL)
        return;
    if (w->fd_lost)
        snprintf(msg, sizeof msg, "the program closed the trace file '%s', which was then removed or replaced: "
                 "the trace ends after %lld bytes", w->path ? w->path : "", (long long)w->fd_off);
    else if (err == 0)
        snprintf(msg, sizeof msg, "the program closed the trace file '%s' and it cannot be reopened: the trace "
                 "ends after %lld bytes", w->path ? w->path : "", (long long)w->fd_off);
    else
        snprintf(msg, sizeof msg, "writing the trace file '%s': %s; the trace ends after %lld bytes (the summary "
                 "still counts every call)", w->path ? w->path : "", strerror(err), (long long)w->fd_off);
    w->on_error(w->on_error_ctx, msg);
}

static void out_raw(tr_writer *w, const unsigned char *p, size_t n)
{
    size_t off = 0;
    if (n == 0 || w->io_error)
        return;
    if (!tw_fd_ours(w, 1)) {
        tw_io_fail(w, 0);
        return;
    }
    off = cushim_write_all(w->fd, p, n);   /* past the file size limit: EFBIG, never SIGXFSZ */
    w->fd_off += (off_t)off;
    if (off < n)
        tw_io_fail(w, errno);
}

/* Compresses what is in 'in' (gzip: deflate with its header and trailer), 'end' the last call. */
static void out_deflate(tr_writer *w, const char *in, size_t n, int end)
{
    z_stream *z = w->z;
    z->next_in = (Bytef *)(uintptr_t)in;
    z->avail_in = (uInt)n;
    for (;;) {
        int rc;
        z->next_out = w->zbuf;
        z->avail_out = TW_ZBUF;
        rc = deflate(z, end ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) {
            tw_io_fail(w, EIO);
            return;
        }
        out_raw(w, w->zbuf, TW_ZBUF - z->avail_out);
        if (end ? rc == Z_STREAM_END : (z->avail_in == 0 && z->avail_out != 0))
            return;
    }
}

void tw_out_flush(tr_writer *w)
{
    if (w->olen == 0)
        return;
    if (w->z != NULL)
        out_deflate(w, w->obuf, w->olen, 0);
    else
        out_raw(w, (const unsigned char *)w->obuf, w->olen);
    w->bytes += w->olen;
    w->olen = 0;
}

/* The file's end: the gzip trailer, then the descriptor closed if it is still ours. */
void tw_out_close(tr_writer *w)
{
    if (w->z != NULL) {
        out_deflate(w, "", 0, 1);
        deflateEnd(w->z);
        free(w->z);
        w->z = NULL;
    }
    if (tw_fd_ours(w, 0) && close(w->fd) != 0 && errno != EINTR)   /* NFS reports a lost write at close */
        tw_io_fail(w, errno);
    w->fd = -1;
}

void tw_out_put(tr_writer *w, const char *s, size_t n)
{
    if (w->obuf == NULL)
        return;
    while (n > 0) {
        size_t room = TW_OBUF - w->olen, k = n < room ? n : room;
        memcpy(w->obuf + w->olen, s, k);
        w->olen += k;
        s += k;
        n -= k;
        if (w->olen == TW_OBUF)
            tw_out_flush(w);
    }
}

/* The event in w->sb, then the buffer reset. */
void tw_emit(tr_writer *w)
{
    if (w->pf != NULL) {   /* Perfetto: the event's packets */
        if (!w->sb.oom && w->sb.len > 0 && tr_pf_event(w->pf, w->sb.p, w->sb.len) == 0)
            tw_out_put(w, w->pf->out.p, w->pf->out.len);
        w->pf->out.len = 0;
        w->pf->out.oom = 0;
    } else if (!w->sb.oom && w->sb.len > 0) {
        tw_out_put(w, w->first ? "\n" : ",\n", w->first ? 1 : 2);
        tw_out_put(w, w->sb.p, w->sb.len);
        w->first = 0;
    }
    w->sb.len = 0;
    w->sb.oom = 0;
    if (w->sb.p)
        w->sb.p[0] = '\0';
}
