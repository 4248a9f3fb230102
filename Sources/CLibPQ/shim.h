#ifndef REINDEX_CLIBPQ_SHIM_H
#define REINDEX_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
