// GLib (Debian's libglib2.0-dev), found with pkg-config: MainLoopGLib's
// way to GMainContext. Only MainLoopGLib links it; the other products stay
// free of GLib.
#include <glib.h>
