/* e2e_direct_app.h - the user-code half of e2e_direct (plain cuda.h, no generated headers). */
#ifndef E2E_DIRECT_APP_H
#define E2E_DIRECT_APP_H
int direct_app_run(void);   /* number of failed steps */
#endif
