import MainLoopJSON

/// Device orientations (BEHAVIOUR.md §4).
public enum DeviceOrientation: String, Sendable, CaseIterable {
    case unknown, portrait, portraitUpsideDown, landscapeLeft, landscapeRight, faceUp, faceDown
}

/// Battery states (BEHAVIOUR.md §4).
public enum BatteryState: String, Sendable, CaseIterable {
    case unknown, unplugged, charging, full
}

/// The device's thermal state (ProcessInfo's `thermalState`; BEHAVIOUR.md §4).
public enum ThermalState: String, Sendable, CaseIterable {
    case nominal, fair, serious, critical
}

/// Whether the network can be reached (the network path's status; BEHAVIOUR.md §4).
public enum NetworkPathStatus: String, Sendable, CaseIterable {
    /// A path is available (NetworkManager's connectivity `full`).
    case satisfied
    /// No path (connectivity `none`).
    case unsatisfied
    /// A path needs a step first, such as a captive portal's sign-in
    /// (connectivity `portal` or `limited`).
    case requiresConnection
}

/// Why a significant time change happened (BEHAVIOUR.md §4).
public enum SignificantTimeChangeReason: String, Sendable, CaseIterable {
    /// Local midnight passed.
    case midnight
    /// The wall clock (CLOCK_REALTIME) was set.
    case clockSet
    /// The system time zone changed.
    case timeZone
    /// A daylight-saving transition of the current zone.
    case daylightSaving
}
