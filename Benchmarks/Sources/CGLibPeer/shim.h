// GLib (Debian's libglib2.0-dev), found with pkg-config, for the C loop
// peers the benchmarks measure MainLoop beside.
#include <glib.h>
