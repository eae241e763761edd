import MainLoop

extension Application {
    /// The system is short of memory: the iOS memory warning. An app that
    /// runs code (inactive, active, background) gets
    /// ``ApplicationDelegate/applicationDidReceiveMemoryWarning(_:)``;
    /// engine observers get ``EngineEvent/memoryWarning(deliveredToApp:)``
    /// in every state. Whether sustained pressure purges a suspended app is
    /// the caller's policy (``perform(_:)`` with ``LifecycleCommand/purge``).
    /// Takes effect in order with every other input (safe from a callback).
    /// - Throws: ``/MainLoop/MainLoopError/shutDown`` after the loop was shut down.
    public func receiveMemoryWarning() throws(MainLoopError) {
        try enqueue(.memoryWarning)
    }

    func deliverMemoryWarning() {
        let runsCode = state.runsAppCode
        emit(.memoryWarning(deliveredToApp: runsCode))
        if runsCode { delegate?.applicationDidReceiveMemoryWarning(self) }
    }
}
