/*
 * layers.h - a stack of interposers around the shim (layers.c): the next
 * layer's function, the previous layer's, and the real function of a driver
 * API.
 */
#ifndef RT_LAYERS_H
#define RT_LAYERS_H

void *ly_next(const char *name);          /* another interposer's 'name' after us, or NULL */
void *ly_prev(const char *name);          /* a preloaded interposer's 'name' before us, or NULL */
void *ly_driver_real(const char *name);   /* the next layer's, else the driver's; pinned */

#endif /* RT_LAYERS_H */
