#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H

// sd-bus from Debian's libsystemd-dev: the D-Bus client MainLoop drives on
// its own loop (the bus's descriptor, events and timeout), for the system
// daemons of a Linux device (UPower, iio-sensor-proxy, logind).

#include <poll.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/// POLLIN and POLLOUT as plain ints (macros in <poll.h>).
static inline int CSystemd_pollin(void) { return POLLIN; }
static inline int CSystemd_pollout(void) { return POLLOUT; }

/// The error name and message of a method-error reply, or NULL.
static inline const char *CSystemd_error_name(sd_bus_message *m) {
    const sd_bus_error *error = sd_bus_message_get_error(m);
    return error ? error->name : NULL;
}
static inline const char *CSystemd_error_message(sd_bus_message *m) {
    const sd_bus_error *error = sd_bus_message_get_error(m);
    return error ? error->message : NULL;
}

#endif
