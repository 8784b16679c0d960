/*
 * peer.h - another copy of cushim loaded before this one (peer.c).
 */
#ifndef RT_PEER_H
#define RT_PEER_H

#include <stddef.h>

/* 1 when an object loaded before this one (link-map order) exports
   cushim_api_id_limit, i.e. is another copy of cushim: its file name is copied to
   'peer' and ours to 'self' (cap bytes each). No libc look-up, no allocation: safe
   from any constructor, before ours. */
int peer_find(char *peer, char *self, size_t cap);

#endif /* RT_PEER_H */
