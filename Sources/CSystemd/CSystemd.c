// libsystemd opened on first use: see include/CSystemd.h.

#include "CSystemd.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/// Every function's address, resolved from one library.
struct CSystemdTable {
#define CSYSTEMD_FUNCTION(ret, name, params, args) ret (*name) params;
#include "CSystemdFunctions.def"
#undef CSYSTEMD_FUNCTION
};

/// The installed table: written once, under `load_lock`, before `loaded`
/// is set; read only after a successful CSystemd_load.
static struct CSystemdTable table;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

/// Resolves every function of `handle` into `into`: 0, or -1 naming the
/// first one missing.
static int resolve(void *handle, const char *path, struct CSystemdTable *into, char *error, size_t size) {
#define CSYSTEMD_FUNCTION(ret, name, params, args)                                   \
    *(void **)&into->name = dlsym(handle, #name);                                    \
    if (into->name == NULL) {                                                        \
        snprintf(error, size, "%s has no %s (libsystemd too old?)", path, #name);    \
        return -1;                                                                   \
    }
#include "CSystemdFunctions.def"
#undef CSYSTEMD_FUNCTION
    return 0;
}

/// Opens `path` and resolves it into `into`; the handle (or NULL).
static void *open_and_resolve(const char *path, struct CSystemdTable *into, char *error, size_t size) {
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(error, size, "cannot load %s: %s", path, reason ? reason : "unknown error");
        return NULL;
    }
    if (resolve(handle, path, into, error, size) != 0) {
        dlclose(handle);
        return NULL;
    }
    return handle;
}

int CSystemd_probe(const char *path, char *error, size_t size) {
    struct CSystemdTable probe;
    void *handle = open_and_resolve(path, &probe, error, size);
    if (handle == NULL) return -1;
    dlclose(handle);
    return 0;
}

int CSystemd_load(char *error, size_t size) {
    pthread_mutex_lock(&load_lock);
    int result = 0;
    if (!loaded) {
        // Kept open for the life of the process: sd-bus objects may live
        // until exit.
        struct CSystemdTable resolved;
        if (open_and_resolve("libsystemd.so.0", &resolved, error, size) != NULL) {
            table = resolved;
            loaded = 1;
        } else {
            result = -1;
        }
    }
    pthread_mutex_unlock(&load_lock);
    return result;
}

#define CSYSTEMD_FUNCTION(ret, name, params, args) \
    ret CSystemd_##name params { return table.name args; }
#include "CSystemdFunctions.def"
#undef CSYSTEMD_FUNCTION
