#ifndef REINDEX_CSQLITE_SHIM_H
#define REINDEX_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
