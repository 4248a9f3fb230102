/* libpq, loaded on first use. The functions below have libpq's own names and prototypes and
 * forward to libpq's, found with dlsym once libpq is loaded; until then nothing of it is in the
 * process. Without libpq they fail as libpq fails when it cannot allocate (NULL, -1, 0, a bad
 * status), and `reindex_libpq_load` says why. */
#include "CLibPQ.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#if defined(__APPLE__)
static const char *const candidates[] = {"libpq.5.dylib", "/opt/homebrew/opt/libpq/lib/libpq.5.dylib", "/usr/local/opt/libpq/lib/libpq.5.dylib", NULL};
#else
static const char *const candidates[] = {"libpq.so.5", NULL};
#endif

#define LIBPQ_FUNCTIONS(X) \
    X(PGconn *, PQconnectdb, (const char *conninfo)) \
    X(void, PQfinish, (PGconn *conn)) \
    X(ConnStatusType, PQstatus, (const PGconn *conn)) \
    X(char *, PQerrorMessage, (const PGconn *conn)) \
    X(char *, PQhost, (const PGconn *conn)) \
    X(char *, PQport, (const PGconn *conn)) \
    X(int, PQsocket, (const PGconn *conn)) \
    X(int, PQbackendPID, (const PGconn *conn)) \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg)) \
    X(PGresult *, PQexec, (PGconn *conn, const char *query)) \
    X(PGresult *, PQprepare, (PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes)) \
    X(PGresult *, PQexecPrepared, (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat)) \
    X(int, PQsendQueryPrepared, (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat)) \
    X(PGresult *, PQgetResult, (PGconn *conn)) \
    X(int, PQconsumeInput, (PGconn *conn)) \
    X(PGnotify *, PQnotifies, (PGconn *conn)) \
    X(int, PQputCopyData, (PGconn *conn, const char *buffer, int nbytes)) \
    X(int, PQputCopyEnd, (PGconn *conn, const char *errormsg)) \
    X(ExecStatusType, PQresultStatus, (const PGresult *res)) \
    X(char *, PQresultErrorField, (const PGresult *res, int fieldcode)) \
    X(int, PQntuples, (const PGresult *res)) \
    X(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num)) \
    X(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num)) \
    X(char *, PQcmdTuples, (PGresult *res)) \
    X(void, PQclear, (PGresult *res)) \
    X(void, PQfreemem, (void *ptr))

#define POINTER(ret, name, params) ret (*name) params;
static struct { LIBPQ_FUNCTIONS(POINTER) } pq;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure = NULL;

static void load(void) {
    void *library = NULL;
    for (const char *const *name = candidates; *name && !library; name++) library = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        failure = dlerror();
        return;
    }
#define RESOLVE(ret, name, params) \
    *(void **)(&pq.name) = dlsym(library, #name); \
    if (!pq.name) { failure = "libpq has no " #name " (a libpq older than version 14?)"; return; }
    LIBPQ_FUNCTIONS(RESOLVE)
}

int reindex_libpq_load(void) {
    pthread_once(&once, load);
    return failure == NULL;
}

const char *reindex_libpq_error(void) {
    pthread_once(&once, load);
    return failure ? failure : "";
}

#define LOADED(fallback) \
    if (!reindex_libpq_load()) return fallback

PGconn *PQconnectdb(const char *conninfo) { LOADED(NULL); return pq.PQconnectdb(conninfo); }
void PQfinish(PGconn *conn) { LOADED(); pq.PQfinish(conn); }
ConnStatusType PQstatus(const PGconn *conn) { LOADED(CONNECTION_BAD); return pq.PQstatus(conn); }
char *PQerrorMessage(const PGconn *conn) { LOADED((char *)reindex_libpq_error()); return pq.PQerrorMessage(conn); }
char *PQhost(const PGconn *conn) { LOADED(NULL); return pq.PQhost(conn); }
char *PQport(const PGconn *conn) { LOADED(NULL); return pq.PQport(conn); }
int PQsocket(const PGconn *conn) { LOADED(-1); return pq.PQsocket(conn); }
int PQbackendPID(const PGconn *conn) { LOADED(0); return pq.PQbackendPID(conn); }
PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) { LOADED(NULL); return pq.PQsetNoticeProcessor(conn, proc, arg); }
PGresult *PQexec(PGconn *conn, const char *query) { LOADED(NULL); return pq.PQexec(conn, query); }
PGresult *PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) {
    LOADED(NULL);
    return pq.PQprepare(conn, stmtName, query, nParams, paramTypes);
}
PGresult *PQexecPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths,
                         const int *paramFormats, int resultFormat) {
    LOADED(NULL);
    return pq.PQexecPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
int PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths,
                        const int *paramFormats, int resultFormat) {
    LOADED(0);
    return pq.PQsendQueryPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
PGresult *PQgetResult(PGconn *conn) { LOADED(NULL); return pq.PQgetResult(conn); }
int PQconsumeInput(PGconn *conn) { LOADED(0); return pq.PQconsumeInput(conn); }
PGnotify *PQnotifies(PGconn *conn) { LOADED(NULL); return pq.PQnotifies(conn); }
int PQputCopyData(PGconn *conn, const char *buffer, int nbytes) { LOADED(-1); return pq.PQputCopyData(conn, buffer, nbytes); }
int PQputCopyEnd(PGconn *conn, const char *errormsg) { LOADED(-1); return pq.PQputCopyEnd(conn, errormsg); }
ExecStatusType PQresultStatus(const PGresult *res) { LOADED(PGRES_FATAL_ERROR); return pq.PQresultStatus(res); }
char *PQresultErrorField(const PGresult *res, int fieldcode) { LOADED(NULL); return pq.PQresultErrorField(res, fieldcode); }
int PQntuples(const PGresult *res) { LOADED(0); return pq.PQntuples(res); }
char *PQgetvalue(const PGresult *res, int tup_num, int field_num) { LOADED(NULL); return pq.PQgetvalue(res, tup_num, field_num); }
int PQgetisnull(const PGresult *res, int tup_num, int field_num) { LOADED(1); return pq.PQgetisnull(res, tup_num, field_num); }
char *PQcmdTuples(PGresult *res) { LOADED(NULL); return pq.PQcmdTuples(res); }
void PQclear(PGresult *res) { LOADED(); pq.PQclear(res); }
void PQfreemem(void *ptr) { LOADED(); pq.PQfreemem(ptr); }
