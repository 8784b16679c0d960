/*
 * driver.h - the real libcuda (driver.c): opened in preload mode, searched for
 * in drop-in mode.
 */
#ifndef RT_DRIVER_H
#define RT_DRIVER_H

void *drv_handle(void);   /* NULL if no driver (searched again after another object is loaded) */

#endif /* RT_DRIVER_H */
