import CSystemd

/// A message received from the bus (a reply or a signal): its header,
/// read at once, and its body, read on demand within ``DBusReadLimits``.
///
/// Reading is separate from receiving so that a handler checks who sent
/// a message, and its signature, before anything of its body is built: a
/// message from the wrong peer, or of the wrong shape, costs no decoding.
/// Holds a reference to sd-bus's message; loop thread only.
public final class DBusMessage {
    /// The sending connection's unique name, stamped by the bus (a peer
    /// cannot forge it); `org.freedesktop.DBus` for the bus itself.
    public let sender: String?
    /// The connection it was addressed to; nil for a broadcast signal.
    public let destination: String?
    /// The object path (signals and calls).
    public let path: String?
    /// The interface (signals and calls).
    public let interface: String?
    /// The member (signals and calls).
    public let member: String?
    /// The body's signature, e.g. `sa{sv}as`.
    public let signature: String

    private let message: OpaquePointer

    init(_ message: OpaquePointer) {
        self.message = CSystemd_sd_bus_message_ref(message)
        sender = CSystemd_sd_bus_message_get_sender(message).map { String(cString: $0) }
        destination = CSystemd_sd_bus_message_get_destination(message).map { String(cString: $0) }
        path = CSystemd_sd_bus_message_get_path(message).map { String(cString: $0) }
        interface = CSystemd_sd_bus_message_get_interface(message).map { String(cString: $0) }
        member = CSystemd_sd_bus_message_get_member(message).map { String(cString: $0) }
        signature = CSystemd_sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? ""
    }

    deinit { CSystemd_sd_bus_message_unref(message) }

    /// Every value of the body, from the start, after checking that the
    /// body's signature is `expected` (when given).
    /// - Throws: ``DBusError/malformed(_:)`` for another signature,
    ///   ``DBusError/tooLarge(_:)`` when the body is over `limits` (found
    ///   before the value over them is built), or what sd-bus refused.
    public func values(expecting expected: String? = nil, limits: DBusReadLimits = .standard) throws(DBusError) -> [DBusValue] {
        if let expected, signature != expected {
            throw .malformed("\(member ?? "a reply") has the signature (\(signature)), not (\(expected))")
        }
        let rewound = CSystemd_sd_bus_message_rewind(message, 1)
        guard rewound >= 0 else { throw .system(operation: "rewinding a message", errno: -rewound) }
        var budget = DBusMessageReader.Budget(limits)
        return try DBusMessageReader.readAll(message, budget: &budget)
    }
}

/// How much of one message's body is read at most: a peer's message is
/// read only up to these, and one over them is refused whole
/// (``DBusError/tooLarge(_:)``) before the value that crosses them is made.
/// The bus itself accepts messages of up to 128 MiB.
public struct DBusReadLimits: Equatable, Sendable {
    /// Values in all (each element, key and variant counts).
    public var maxValues: Int
    /// Bytes of every string, object path and signature together.
    public var maxStringBytes: Int
    /// Bytes of one string.
    public var maxStringLength: Int

    /// Values in all, string bytes in all, and bytes of one string.
    public init(maxValues: Int, maxStringBytes: Int, maxStringLength: Int) {
        self.maxValues = maxValues
        self.maxStringBytes = maxStringBytes
        self.maxStringLength = maxStringLength
    }

    /// Far above what UPower, iio-sensor-proxy or logind send for one
    /// object (a few dozen properties): 4,096 values, 256 KiB of text,
    /// 16 KiB for one string.
    public static let standard = DBusReadLimits(maxValues: 4096, maxStringBytes: 256 << 10, maxStringLength: 16 << 10)
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension DBusMessage: Sendable {}
