import Glibc
import Logging

/// A swift-log handler that never blocks its caller: each line goes to a
/// ``BoundedOutputPump`` (a bounded queue and a writer thread), so a stderr
/// that nobody reads (a full pipe) costs dropped, counted lines, never a
/// stalled loop. Lines look like swift-log's `StreamLogHandler`'s, with the
/// time in UTC: `2026-11-24T01:50:00.123Z error mainloop.run : message`.
///
/// ```swift
/// LoggingSystem.bootstrap { BoundedLogHandler(label: $0, pump: BoundedLogHandler.standardError) }
/// // … once the service's loop exists (its lines then wake the writer once a
/// // turn, and the first starts it in the loop's first turn):
/// BoundedLogHandler.standardError.wakingLoop = loop
/// // … at exit:
/// _ = BoundedLogHandler.standardError.finish(within: .seconds(1))
/// ```
public struct BoundedLogHandler: LogHandler {
    /// The process's shared stderr pump (1 MiB of pending lines at most),
    /// its writer thread started on first use.
    public static let standardError = BoundedOutputPump(descriptor: STDERR_FILENO, limitBytes: 1 << 20)

    /// The logger's label, printed on each line.
    public let label: String
    private let pump: BoundedOutputPump
    /// Messages below this level are not written.
    public var logLevel: Logger.Level = .info
    /// Metadata added to every line.
    public var metadata: Logger.Metadata = [:]

    /// A handler for `label` writing through `pump`.
    public init(label: String, pump: BoundedOutputPump) {
        self.label = label
        self.pump = pump
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        // Appended field by field: `joined(separator:)` is generic code the
        // compiler leaves unspecialized, and its first call resolved
        // conformances at run time (0.1 million instructions of start-up).
        var fields = ""
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            fields += " \(key)=\(value)"
        }
        pump.write(line: "\(UTCTimestamp.now().iso) \(event.level) \(label) :\(fields) \(event.message)")
    }
}
