import CSystemd

/// libsystemd, opened when the first ``SystemBusConnection`` is made
/// rather than linked: a service that never connects to a bus never loads
/// it, nor the six libraries it depends on (about 1.5 ms of every
/// start-up, and its share of the resident set).
enum SystemdLibrary {
    /// Opens libsystemd.so.0 and resolves the sd-bus functions, once per
    /// process (later calls return at once). Safe from any thread.
    /// - Throws: ``DBusError/libraryUnavailable(_:)`` saying what failed.
    static func load() throws(DBusError) {
        var error = [CChar](repeating: 0, count: 512)
        guard CSystemd_load(&error, error.count) == 0 else {
            throw .libraryUnavailable(text(error))
        }
    }

    /// Whether `path` is a library with every sd-bus function MainLoop
    /// calls, without installing it: nil, or what failed (its use is to test
    /// how a missing or wrong library is reported).
    static func problem(loading path: String) -> String? {
        var error = [CChar](repeating: 0, count: 512)
        guard CSystemd_probe(path, &error, error.count) != 0 else { return nil }
        return text(error)
    }

    /// The NUL-terminated message in `buffer`.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
