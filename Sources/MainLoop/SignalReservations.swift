
/// Signals that belong to someone else in the process. Two handlers for
/// one signal cannot both work (libevent's `sigaction` and a
/// `DispatchSource` behind `SIG_IGN` overwrite each other), so the rule is
/// explicit: whoever owns a signal reserves it, and the loop refuses it.
enum SignalReservations {
    private static let owners = LockedValue<[Int32: String]>([:])

    static func reserve(_ signals: [Int32], for owner: String) {
        owners.withLock { table in for signal in signals { table[signal] = owner } }
    }

    static func release(_ signals: [Int32]) {
        owners.withLock { table in for signal in signals { table[signal] = nil } }
    }

    static func owner(of signal: Int32) -> String? { owners.withLock { $0[signal] } }
}

extension MainRunLoop {
    /// Reserves `signals` for `owner` (e.g. "a ServiceGroup") in this
    /// process: from now on ``addSignal(_:handler:)`` refuses them on every
    /// loop with ``MainLoopError/signalReserved(signal:owner:)``, instead of
    /// silently taking them from their owner. Thread-safe.
    public static func reserveSignals(_ signals: [Int32], for owner: String) {
        SignalReservations.reserve(signals, for: owner)
    }

    /// Gives reserved signals back (loops may take them again). Thread-safe.
    public static func releaseSignals(_ signals: [Int32]) {
        SignalReservations.release(signals)
    }
}
