#ifndef REINDEX_CSDBUS_H
#define REINDEX_CSDBUS_H
/* sd-bus's declarations (libsystemd's headers), and the functions ReindexDesktop calls, defined
 * in sdbus.c: libsystemd is loaded (dlopen) the first time one is called. */
#if defined(__linux__)
#include <systemd/sd-bus.h>

/* Loads libsystemd now; 1 when it is there, else 0 with `reindex_sdbus_error()` saying why. */
int reindex_sdbus_load(void);
const char *reindex_sdbus_error(void);
#endif /* __linux__: D-Bus desktop search is Linux's only */
#endif
