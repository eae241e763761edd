import MainLoopJSON

/// One system event: a new value for a kind (and, for keyed kinds, for one
/// subject: an accessory id, a screen id, a user-defaults key).
public struct SystemEvent: Sendable, Equatable {
    /// The kind of event.
    public var kind: NotificationKind
    /// The subject for keyed kinds (accessory/screen id, defaults key), else nil.
    public var subject: String?
    /// The new value (for significantTimeChange, the reason).
    public var value: JSONValue

    /// An event with an explicit kind, subject and value.
    public init(kind: NotificationKind, subject: String? = nil, value: JSONValue) {
        self.kind = kind
        self.subject = subject
        self.value = value
    }

    /// The device orientation changed.
    public static func orientation(_ orientation: DeviceOrientation) -> SystemEvent {
        SystemEvent(kind: .orientation, value: .string(orientation.rawValue))
    }
    /// The current locale changed (an identifier such as `fr_FR`).
    public static func locale(_ identifier: String) -> SystemEvent {
        SystemEvent(kind: .locale, value: .string(identifier))
    }
    /// A user default was set (or removed, with `nil`/`.null`).
    public static func userDefault(key: String, value: JSONValue?) -> SystemEvent {
        SystemEvent(kind: .userDefaults, subject: key, value: value ?? .null)
    }
    /// A significant time change happened.
    public static func significantTimeChange(_ reason: SignificantTimeChangeReason) -> SystemEvent {
        SystemEvent(kind: .significantTimeChange, value: .string(reason.rawValue))
    }
    /// The battery level changed (0...1).
    public static func batteryLevel(_ level: Double) -> SystemEvent {
        SystemEvent(kind: .batteryLevel, value: .number(level))
    }
    /// The battery state changed.
    public static func batteryState(_ state: BatteryState) -> SystemEvent {
        SystemEvent(kind: .batteryState, value: .string(state.rawValue))
    }
    /// The proximity sensor changed.
    public static func proximity(_ near: Bool) -> SystemEvent {
        SystemEvent(kind: .proximity, value: .bool(near))
    }
    /// Protected data became available or unavailable.
    public static func protectedData(available: Bool) -> SystemEvent {
        SystemEvent(kind: .protectedData, value: .string(available ? "available" : "unavailable"))
    }
    /// An accessory connected or disconnected.
    public static func accessory(id: String, connected: Bool) -> SystemEvent {
        SystemEvent(kind: .accessory, subject: id, value: .bool(connected))
    }
    /// A screen connected or disconnected.
    public static func screen(id: String, connected: Bool) -> SystemEvent {
        SystemEvent(kind: .screen, subject: id, value: .bool(connected))
    }
    /// A screen's mode changed.
    public static func screenMode(screen: String, mode: String) -> SystemEvent {
        SystemEvent(kind: .screenMode, subject: screen, value: .string(mode))
    }
    /// The ubiquity identity token changed (nil: signed out).
    public static func ubiquityIdentity(_ token: String?) -> SystemEvent {
        SystemEvent(kind: .ubiquityIdentity, value: token.map(JSONValue.string) ?? .null)
    }

    /// Low power mode on or off (`powerStateDidChange`).
    public static func lowPowerMode(_ on: Bool) -> SystemEvent {
        SystemEvent(kind: .lowPowerMode, value: .bool(on))
    }

    /// The device's thermal state.
    public static func thermalState(_ state: ThermalState) -> SystemEvent {
        SystemEvent(kind: .thermalState, value: .string(state.rawValue))
    }

    /// The network path's status.
    public static func networkPath(_ status: NetworkPathStatus) -> SystemEvent {
        SystemEvent(kind: .networkPath, value: .string(status.rawValue))
    }
}
