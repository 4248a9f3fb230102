#ifndef REINDEX_CLIBPQ_H
#define REINDEX_CLIBPQ_H
/* libpq's declarations, and the functions the PostgreSQL store calls, defined in libpq.c: each
 * loads libpq (dlopen) the first time any of them is called, so a program that never opens a
 * PostgreSQL index never loads libpq, nor Kerberos, LDAP and GnuTLS with it. */
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#elif __has_include(<postgresql/libpq-fe.h>)
#include <postgresql/libpq-fe.h>
#else
#error "libpq's headers are missing: install libpq-dev (Scripts/ensure-system-packages.sh)"
#endif

/* Loads libpq now; 1 when it is there, else 0 with `reindex_libpq_error()` saying why. */
int reindex_libpq_load(void);
const char *reindex_libpq_error(void);
#endif
