// GIO (Debian's libglib2.0-dev), for the GLib bridge example's GDBus calls.
#include <gio/gio.h>
