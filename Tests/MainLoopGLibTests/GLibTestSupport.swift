import CGLib
import Foundation
import Glibc
import MainLoop

/// A Swift closure as a GLib source's callback: true keeps the source.
final class GLibCallback {
    let body: () -> Bool
    init(_ body: @escaping () -> Bool) { self.body = body }
}

/// GLib's own locks are futexes, which ThreadSanitizer does not see: a
/// callback made on one thread and run by the context's owner on another
/// looked like a race to it, though GLib's lock ordered the two. The box is
/// also handed over through this lock, which ThreadSanitizer sees.
private let handover = NSLock()

/// Sets `body` as the callback of `source`, attaches it to `context` and
/// drops the caller's reference: the context owns the source.
@discardableResult
func attach(_ source: UnsafeMutablePointer<GSource>, to context: OpaquePointer?, _ body: @escaping () -> Bool) -> guint {
    let box = Unmanaged.passRetained(GLibCallback(body)).toOpaque()
    handover.lock()
    handover.unlock()
    g_source_set_callback(source, { data in
        handover.lock()
        handover.unlock()
        return Unmanaged<GLibCallback>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
    }, box, { data in
        Unmanaged<GLibCallback>.fromOpaque(data!).release()
    })
    let id = g_source_attach(source, context)
    g_source_unref(source)
    return id
}

/// A GLib timeout of `milliseconds` on `context`.
@discardableResult
func addTimeout(_ milliseconds: UInt32, to context: OpaquePointer?, priority: Int32 = G_PRIORITY_DEFAULT,
                _ body: @escaping () -> Bool) -> guint {
    let source = g_timeout_source_new(milliseconds)!
    g_source_set_priority(source, priority)
    return attach(source, to: context, body)
}

/// A GLib idle source on `context`.
@discardableResult
func addIdle(to context: OpaquePointer?, priority: Int32 = G_PRIORITY_DEFAULT_IDLE, _ body: @escaping () -> Bool) -> guint {
    let source = g_idle_source_new()!
    g_source_set_priority(source, priority)
    return attach(source, to: context, body)
}

/// A value handed to another thread in a test (the test orders the accesses).
struct Handed<Value>: @unchecked Sendable {
    let value: Value
}

/// The calling thread's CPU time.
func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
}

/// The process's resident set, in bytes (`/proc/self/statm`).
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0, resident = 0
    withUnsafeMutablePointer(to: &size) { sizePointer in
        withUnsafeMutablePointer(to: &resident) { residentPointer in
            _ = withVaList([sizePointer, residentPointer]) { vfscanf(file, "%ld %ld", $0) }
        }
    }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Percentile `fraction` of `values` (nearest rank).
func percentile(_ values: [Duration], _ fraction: Double) -> Duration {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .zero }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}
