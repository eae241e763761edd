// GLib on the main loop (MainLoopGLib): GLib's default context runs on
// MainRunLoop.main, so a GDBus call, a D-Bus signal and a g_timeout_add run
// on the main thread beside a MainLoop timer and a @MainActor task.
//   glib-bridge BUS_ADDRESS      (a private dbus-daemon's address)
// Prints each callback with the thread it ran on, then exits 0.
import CGio
import Glibc
import MainLoopGLib
import MainLoopKit

/// Writes one line at once (unbuffered, so the order is the real one).
func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
}

/// The process's main thread (this code runs on it first).
let mainThread = pthread_self()

/// Which thread runs the caller: the process's main thread or another.
func threadName() -> String { pthread_equal(pthread_self(), mainThread) != 0 ? "the main thread" : "another thread" }

let ownName = "org.mainloop.GLibBridge"
let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    emit("usage: glib-bridge BUS_ADDRESS")
    exit(2)
}

/// What has run; the run ends when all of it has.
var seen: Set<String> = []
@MainActor func saw(_ what: String) {
    seen.insert(what)
    if seen.count == 6 { MainRunLoop.main.stop() }
}

let loop = MainRunLoop.main
let glib = try loop.runGLibContext()

var error: UnsafeMutablePointer<GError>?
guard let bus = g_dbus_connection_new_for_address_sync(
    arguments[1], GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                       | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue),
    nil, nil, &error)
else {
    emit("cannot connect to \(arguments[1]): \(String(cString: error!.pointee.message))")
    exit(1)
}

// The signal: dbus-daemon announces our name's new owner.
g_dbus_connection_signal_subscribe(
    bus, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged", "/org/freedesktop/DBus", ownName,
    G_DBUS_SIGNAL_FLAGS_NONE, { _, _, _, _, _, _, _ in
        MainActor.assumeIsolated {
            emit("GDBus signal NameOwnerChanged(\(ownName)) on \(threadName())")
            saw("signal")
        }
    }, nil, nil)

/// Calls `method` of the bus daemon; `reply` gets the reply's first value.
func callBus(_ method: String, _ parameters: OpaquePointer?) {
    g_dbus_connection_call(
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method, parameters, nil,
        G_DBUS_CALL_FLAGS_NONE, 5_000, nil, { source, result, context in
            let method = String(cString: context!.assumingMemoryBound(to: CChar.self))
            free(context)
            var error: UnsafeMutablePointer<GError>?
            guard let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) else {
                emit("GDBus \(method) failed: \(String(cString: error!.pointee.message))")
                exit(1)
            }
            g_variant_unref(reply)
            MainActor.assumeIsolated {
                emit("GDBus reply to \(method) on \(threadName())")
                saw(method)
            }
        }, strdup(method))
}

callBus("GetId", nil)
var requestName = [g_variant_new_string(ownName), g_variant_new_uint32(0)]
callBus("RequestName", g_variant_new_tuple(&requestName, 2))

g_timeout_add(30, { _ in
    MainActor.assumeIsolated {
        emit("GLib timeout on \(threadName())")
        saw("GLib timeout")
    }
    return 0
}, nil)

loop.scheduleTimer(after: .milliseconds(10)) {
    MainActor.assumeIsolated {
        emit("MainLoop timer on \(threadName())")
        saw("MainLoop timer")
    }
}

Task { @MainActor in
    emit("@MainActor task on \(threadName())")
    saw("task")
}

// A run that never finishes is a failure, not a hang.
loop.scheduleTimer(after: .seconds(10)) {
    emit("timed out; seen: \(MainActor.assumeIsolated { seen.sorted() })")
    exit(1)
}

try loop.run()
glib.release()
g_object_unref(UnsafeMutableRawPointer(bus))
emit("stopped cleanly")
