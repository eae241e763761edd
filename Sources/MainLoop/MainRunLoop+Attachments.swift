/// State that a library keeps with one ``MainRunLoop``: made on first use
/// by ``MainRunLoop/attachment(_:make:)``, kept as long as the loop, and
/// told once when the loop shuts down.
///
/// This is how an integration gives every loop one object of its own (the
/// SwiftNIO view of the loop in `MainLoopNIO`, for example) without the
/// loop knowing the integration's types. An attachment must not hold the
/// loop strongly: the loop holds it, and the pair would never be freed.
public protocol LoopAttachment: AnyObject, Sendable {
    /// Called once, after the loop has shut down: posts to it throw
    /// ``MainLoopError/shutDown`` by now, and its sources and timers are
    /// released. Runs on the thread that shut the loop down (the loop
    /// thread), or on the thread that released a loop never shut down.
    func loopDidShutDown()
}

/// The attachments of one loop. Guarded by the loop's `attachments` lock.
struct LoopAttachments {
    var values: [ObjectIdentifier: any LoopAttachment] = [:]
    /// Set at shutdown: attachments made later are told at once.
    var loopIsShutDown = false
}

extension MainRunLoop {
    /// The loop's attachment of type `Value`, made by `make` the first time
    /// it is asked for (from any thread; `make` runs under the attachments'
    /// lock, so it must not ask for another attachment). One per type per
    /// loop, so its identity is stable for the loop's life. Asked for after
    /// shutdown, the new attachment is made and told of the shutdown at once.
    public func attachment<Value: LoopAttachment>(_ type: Value.Type = Value.self, make: () -> Value) -> Value {
        let (value, made, afterShutdown) = attachments.withLock { (state: inout LoopAttachments) -> (Value, Bool, Bool) in
            if let existing = state.values[ObjectIdentifier(type)] as? Value { return (existing, false, false) }
            let value = make()
            state.values[ObjectIdentifier(type)] = value
            return (value, true, state.loopIsShutDown)
        }
        if made, afterShutdown { value.loopDidShutDown() }
        return value
    }

    /// Tells every attachment of the shutdown, outside the lock (what they
    /// do may ask for attachments).
    func shutDownAttachments() {
        let values = attachments.withLock { (state: inout LoopAttachments) -> [any LoopAttachment] in
            guard !state.loopIsShutDown else { return [] }
            state.loopIsShutDown = true
            return Array(state.values.values)
        }
        for value in values { value.loopDidShutDown() }
    }
}
