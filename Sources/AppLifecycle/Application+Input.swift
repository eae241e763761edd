import MainLoop

extension Application {
    /// Delivers user input (a touch id) through the loop at input priority.
    /// Safe from any thread. It reaches the delegate only if the app is
    /// active when the loop handles it; otherwise it is discarded, counted
    /// in ``discardedInputCount`` and reported as ``EngineEvent/inputDiscarded(_:)``.
    /// - Throws: ``MainLoopError/shutDown`` after the loop was shut down.
    public func deliverInput(_ input: String) throws(MainLoopError) {
        try inputChannel.post(input)
    }

    func receiveInput(_ input: String) {
        guard state == .active else {
            discardedInputCount += 1
            emit(.inputDiscarded(input))
            return
        }
        delegate?.application(self, didReceiveInput: input)
    }
}
