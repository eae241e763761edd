import MainLoopJSON

/// Device orientations (BEHAVIOUR.md §4).
public enum DeviceOrientation: String, Sendable, CaseIterable {
    case unknown, portrait, portraitUpsideDown, landscapeLeft, landscapeRight, faceUp, faceDown
}

/// Battery states (BEHAVIOUR.md §4).
public enum BatteryState: String, Sendable, CaseIterable {
    case unknown, unplugged, charging, full
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
