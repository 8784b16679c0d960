/*
 * rm_backend.h - one client's back end (rm_backend.c): serves the calls arriving on 'fd' through the shim at
 * 'shim_path' (loaded here, after the fork) until the client closes the connection. Returns the process's
 * exit status.
 */
#ifndef RM_BACKEND_H
#define RM_BACKEND_H

int rm_backend_run(int fd, const char *shim_path, int verbose);

#endif /* RM_BACKEND_H */
