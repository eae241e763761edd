/// A kind of system notification (orientation, locale, ...). An open set:
/// the fifteen standard kinds of BEHAVIOUR.md §4 are constants, and users register
/// their own kinds with a ``CoalescingRule``.
///
/// Kinds compare by name. The standard constants also carry their slot in
/// every center (the first fifteen slots, in the order of BEHAVIOUR.md §4), so the
/// hot path finds a kind's rule and held slot by index, without hashing.
public struct NotificationKind: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The kind's name; also the key of its events in scenarios and on the
    /// control socket (`{"orientation": "faceUp"}`).
    public let name: String
    /// The kind's slot in its engine (the standard kinds' slots are fixed),
    /// or -1 for a kind made by name, which is looked up by name.
    public let slot: Int

    /// A kind by name (looked up by name in a center).
    public init(_ name: String) { self.init(name: name, slot: -1) }
    public init(stringLiteral value: String) { self.init(value) }

    init(name: String, slot: Int) {
        self.name = name
        self.slot = slot
    }

    public static func == (lhs: NotificationKind, rhs: NotificationKind) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    public var description: String { name }

    public static let orientation = NotificationKind(name: "orientation", slot: 0)
    public static let locale = NotificationKind(name: "locale", slot: 1)
    public static let userDefaults = NotificationKind(name: "userDefaults", slot: 2)
    public static let significantTimeChange = NotificationKind(name: "significantTimeChange", slot: 3)
    public static let batteryLevel = NotificationKind(name: "batteryLevel", slot: 4)
    public static let batteryState = NotificationKind(name: "batteryState", slot: 5)
    public static let proximity = NotificationKind(name: "proximity", slot: 6)
    public static let protectedData = NotificationKind(name: "protectedData", slot: 7)
    public static let accessory = NotificationKind(name: "accessory", slot: 8)
    public static let screen = NotificationKind(name: "screen", slot: 9)
    public static let screenMode = NotificationKind(name: "screenMode", slot: 10)
    public static let ubiquityIdentity = NotificationKind(name: "ubiquityIdentity", slot: 11)
    public static let lowPowerMode = NotificationKind(name: "lowPowerMode", slot: 12)
    public static let thermalState = NotificationKind(name: "thermalState", slot: 13)
    public static let networkPath = NotificationKind(name: "networkPath", slot: 14)

    /// The standard kinds, in slot order.
    public static let standard: [NotificationKind] = [
        .orientation, .locale, .userDefaults, .significantTimeChange, .batteryLevel, .batteryState,
        .proximity, .protectedData, .accessory, .screen, .screenMode, .ubiquityIdentity,
        .lowPowerMode, .thermalState, .networkPath,
    ]
}
