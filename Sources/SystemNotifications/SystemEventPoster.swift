import MainLoop

/// A Sendable handle for posting system events to a center from any thread
/// (event sources, the control socket's workers). Events are handled on the
/// loop at system priority, in post order per thread; events of kinds the
/// center does not know are dropped there and counted in
/// ``SystemNotificationCenter/unknownKindEvents``.
public struct SystemEventPoster: Sendable {
    let channel: EventChannel<SystemEvent>

    /// Posts `event`.
    /// - Throws: ``MainLoopError/shutDown`` after the loop was shut down.
    public func post(_ event: SystemEvent) throws(MainLoopError) {
        try channel.post(event)
    }
}
