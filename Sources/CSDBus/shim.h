#ifndef REINDEX_CSDBUS_SHIM_H
#define REINDEX_CSDBUS_SHIM_H
/* sd-bus, systemd's D-Bus client library (libsystemd). Only ReindexDesktop imports it. */
#include <systemd/sd-bus.h>
#endif
