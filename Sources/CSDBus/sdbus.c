/* sd-bus (libsystemd), loaded on first use: the functions below have sd-bus's own names and
 * prototypes and forward to libsystemd's, found with dlsym once it is loaded. Only
 * `reindex desktop serve` (and its tests and benchmark) call them, so no other command loads
 * libsystemd (nor libgcrypt, lz4, zstd, lzma and libcap with it). Without libsystemd each fails
 * with -ENOSYS (or NULL), and `reindex_sdbus_error` says why. */
#include "CSDBus.h"
#if defined(__linux__)
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#define SDBUS_FUNCTIONS(X) \
    X(int, sd_bus_add_object, (sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback, void *userdata)) \
    X(int, sd_bus_call, (sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply)) \
    X(void, sd_bus_error_free, (sd_bus_error *e)) \
    X(int, sd_bus_error_set, (sd_bus_error *e, const char *name, const char *message)) \
    X(int, sd_bus_flush, (sd_bus *bus)) \
    X(sd_bus*, sd_bus_flush_close_unref, (sd_bus *bus)) \
    X(int, sd_bus_get_events, (sd_bus *bus)) \
    X(int, sd_bus_get_fd, (sd_bus *bus)) \
    X(int, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p)) \
    X(int, sd_bus_message_close_container, (sd_bus_message *m)) \
    X(int, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents)) \
    X(int, sd_bus_message_exit_container, (sd_bus_message *m)) \
    X(const sd_bus_error*, sd_bus_message_get_error, (sd_bus_message *m)) \
    X(int, sd_bus_message_get_expect_reply, (sd_bus_message *m)) \
    X(const char*, sd_bus_message_get_interface, (sd_bus_message *m)) \
    X(const char*, sd_bus_message_get_member, (sd_bus_message *m)) \
    X(const char*, sd_bus_message_get_path, (sd_bus_message *m)) \
    X(int, sd_bus_message_get_reply_cookie, (sd_bus_message *m, uint64_t *cookie)) \
    X(const char*, sd_bus_message_get_sender, (sd_bus_message *m)) \
    X(const char*, sd_bus_message_get_signature, (sd_bus_message *m, int complete)) \
    X(int, sd_bus_message_is_method_call, (sd_bus_message *m, const char *interface, const char *member)) \
    X(int, sd_bus_message_new_method_call, (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member)) \
    X(int, sd_bus_message_new_method_return, (sd_bus_message *call, sd_bus_message **m)) \
    X(int, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents)) \
    X(int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p)) \
    X(sd_bus_message*, sd_bus_message_ref, (sd_bus_message *m)) \
    X(sd_bus_message*, sd_bus_message_unref, (sd_bus_message *m)) \
    X(int, sd_bus_new, (sd_bus **ret)) \
    X(int, sd_bus_open_user, (sd_bus **ret)) \
    X(int, sd_bus_process, (sd_bus *bus, sd_bus_message **r)) \
    X(int, sd_bus_release_name, (sd_bus *bus, const char *name)) \
    X(int, sd_bus_reply_method_error, (sd_bus_message *call, const sd_bus_error *e)) \
    X(int, sd_bus_request_name, (sd_bus *bus, const char *name, uint64_t flags)) \
    X(int, sd_bus_send, (sd_bus *bus, sd_bus_message *m, uint64_t *cookie)) \
    X(int, sd_bus_set_address, (sd_bus *bus, const char *address)) \
    X(int, sd_bus_set_bus_client, (sd_bus *bus, int b)) \
    X(int, sd_bus_start, (sd_bus *bus)) \
    X(int, sd_bus_wait, (sd_bus *bus, uint64_t timeout_usec))

#define POINTER(ret, name, params) ret (*name) params;
static struct { SDBUS_FUNCTIONS(POINTER) } sd;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure = NULL;

static void load(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        failure = dlerror();
        return;
    }
#define RESOLVE(ret, name, params) \
    *(void **)(&sd.name) = dlsym(library, #name); \
    if (!sd.name) { failure = "libsystemd has no " #name; return; }
    SDBUS_FUNCTIONS(RESOLVE)
}

int reindex_sdbus_load(void) {
    pthread_once(&once, load);
    return failure == NULL;
}

const char *reindex_sdbus_error(void) {
    pthread_once(&once, load);
    return failure ? failure : "";
}

int sd_bus_add_object(sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback, void *userdata) { return reindex_sdbus_load() ? sd.sd_bus_add_object(bus, slot, path, callback, userdata) : -ENOSYS; }
int sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply) { return reindex_sdbus_load() ? sd.sd_bus_call(bus, m, usec, ret_error, reply) : -ENOSYS; }
void sd_bus_error_free(sd_bus_error *e) { if (reindex_sdbus_load()) sd.sd_bus_error_free(e); }
int sd_bus_error_set(sd_bus_error *e, const char *name, const char *message) { return reindex_sdbus_load() ? sd.sd_bus_error_set(e, name, message) : -ENOSYS; }
int sd_bus_flush(sd_bus *bus) { return reindex_sdbus_load() ? sd.sd_bus_flush(bus) : -ENOSYS; }
sd_bus* sd_bus_flush_close_unref(sd_bus *bus) { return reindex_sdbus_load() ? sd.sd_bus_flush_close_unref(bus) : NULL; }
int sd_bus_get_events(sd_bus *bus) { return reindex_sdbus_load() ? sd.sd_bus_get_events(bus) : -ENOSYS; }
int sd_bus_get_fd(sd_bus *bus) { return reindex_sdbus_load() ? sd.sd_bus_get_fd(bus) : -ENOSYS; }
int sd_bus_message_append_basic(sd_bus_message *m, char type, const void *p) { return reindex_sdbus_load() ? sd.sd_bus_message_append_basic(m, type, p) : -ENOSYS; }
int sd_bus_message_close_container(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_close_container(m) : -ENOSYS; }
int sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents) { return reindex_sdbus_load() ? sd.sd_bus_message_enter_container(m, type, contents) : -ENOSYS; }
int sd_bus_message_exit_container(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_exit_container(m) : -ENOSYS; }
const sd_bus_error* sd_bus_message_get_error(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_get_error(m) : NULL; }
int sd_bus_message_get_expect_reply(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_get_expect_reply(m) : -ENOSYS; }
const char* sd_bus_message_get_interface(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_get_interface(m) : NULL; }
const char* sd_bus_message_get_member(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_get_member(m) : NULL; }
const char* sd_bus_message_get_path(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_get_path(m) : NULL; }
int sd_bus_message_get_reply_cookie(sd_bus_message *m, uint64_t *cookie) { return reindex_sdbus_load() ? sd.sd_bus_message_get_reply_cookie(m, cookie) : -ENOSYS; }
const char* sd_bus_message_get_sender(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_get_sender(m) : NULL; }
const char* sd_bus_message_get_signature(sd_bus_message *m, int complete) { return reindex_sdbus_load() ? sd.sd_bus_message_get_signature(m, complete) : NULL; }
int sd_bus_message_is_method_call(sd_bus_message *m, const char *interface, const char *member) { return reindex_sdbus_load() ? sd.sd_bus_message_is_method_call(m, interface, member) : -ENOSYS; }
int sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member) { return reindex_sdbus_load() ? sd.sd_bus_message_new_method_call(bus, m, destination, path, interface, member) : -ENOSYS; }
int sd_bus_message_new_method_return(sd_bus_message *call, sd_bus_message **m) { return reindex_sdbus_load() ? sd.sd_bus_message_new_method_return(call, m) : -ENOSYS; }
int sd_bus_message_open_container(sd_bus_message *m, char type, const char *contents) { return reindex_sdbus_load() ? sd.sd_bus_message_open_container(m, type, contents) : -ENOSYS; }
int sd_bus_message_read_basic(sd_bus_message *m, char type, void *p) { return reindex_sdbus_load() ? sd.sd_bus_message_read_basic(m, type, p) : -ENOSYS; }
sd_bus_message* sd_bus_message_ref(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_ref(m) : NULL; }
sd_bus_message* sd_bus_message_unref(sd_bus_message *m) { return reindex_sdbus_load() ? sd.sd_bus_message_unref(m) : NULL; }
int sd_bus_new(sd_bus **ret) { return reindex_sdbus_load() ? sd.sd_bus_new(ret) : -ENOSYS; }
int sd_bus_open_user(sd_bus **ret) { return reindex_sdbus_load() ? sd.sd_bus_open_user(ret) : -ENOSYS; }
int sd_bus_process(sd_bus *bus, sd_bus_message **r) { return reindex_sdbus_load() ? sd.sd_bus_process(bus, r) : -ENOSYS; }
int sd_bus_release_name(sd_bus *bus, const char *name) { return reindex_sdbus_load() ? sd.sd_bus_release_name(bus, name) : -ENOSYS; }
int sd_bus_reply_method_error(sd_bus_message *call, const sd_bus_error *e) { return reindex_sdbus_load() ? sd.sd_bus_reply_method_error(call, e) : -ENOSYS; }
int sd_bus_request_name(sd_bus *bus, const char *name, uint64_t flags) { return reindex_sdbus_load() ? sd.sd_bus_request_name(bus, name, flags) : -ENOSYS; }
int sd_bus_send(sd_bus *bus, sd_bus_message *m, uint64_t *cookie) { return reindex_sdbus_load() ? sd.sd_bus_send(bus, m, cookie) : -ENOSYS; }
int sd_bus_set_address(sd_bus *bus, const char *address) { return reindex_sdbus_load() ? sd.sd_bus_set_address(bus, address) : -ENOSYS; }
int sd_bus_set_bus_client(sd_bus *bus, int b) { return reindex_sdbus_load() ? sd.sd_bus_set_bus_client(bus, b) : -ENOSYS; }
int sd_bus_start(sd_bus *bus) { return reindex_sdbus_load() ? sd.sd_bus_start(bus) : -ENOSYS; }
int sd_bus_wait(sd_bus *bus, uint64_t timeout_usec) { return reindex_sdbus_load() ? sd.sd_bus_wait(bus, timeout_usec) : -ENOSYS; }
#endif /* __linux__ */
