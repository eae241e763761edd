#ifndef CSYSTEMD_H
#define CSYSTEMD_H

// sd-bus from libsystemd: the D-Bus client MainLoop drives on its own loop
// (the bus's descriptor, events and timeout), for the system daemons of a
// Linux device (UPower, iio-sensor-proxy, logind).
//
// libsystemd is not linked: it is opened with dlopen when the D-Bus
// sources start (CSystemd_load), so a service that does not use them never
// loads it and the six libraries it brings (libgcrypt, liblzma, libzstd,
// liblz4, libcap, libgpg-error), about 1.5 ms of every start-up. Only the
// types and signatures come from Debian's libsystemd-dev headers. Each
// function below is CSystemd_<its sd-bus name>, with the sd-bus signature.

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/// Opens libsystemd.so.0 and resolves every function this module calls,
/// once per process. Returns 0, or -1 with what failed written to `error`
/// (`size` bytes at most). Safe from any thread; after a success the
/// functions below may be called (calling one before is a crash).
int CSystemd_load(char *error, size_t size);

/// Opens `path` and resolves every function, without installing them:
/// 0 when all were found, else -1 with what failed in `error`. (What
/// CSystemd_load does first, exposed so its failures can be tested.)
int CSystemd_probe(const char *path, char *error, size_t size);

#define CSYSTEMD_FUNCTION(ret, name, params, args) ret CSystemd_##name params;
#include "CSystemdFunctions.def"
#undef CSYSTEMD_FUNCTION

/// POLLIN and POLLOUT as plain ints (macros in <poll.h>).
static inline int CSystemd_pollin(void) { return POLLIN; }
static inline int CSystemd_pollout(void) { return POLLOUT; }

/// The error name and message of a method-error reply, or NULL.
static inline const char *CSystemd_error_name(sd_bus_message *m) {
    const sd_bus_error *error = CSystemd_sd_bus_message_get_error(m);
    return error ? error->name : NULL;
}
static inline const char *CSystemd_error_message(sd_bus_message *m) {
    const sd_bus_error *error = CSystemd_sd_bus_message_get_error(m);
    return error ? error->message : NULL;
}

#endif
