import MainLoop

extension Application {
    /// Delivers user input (a touch id), in order with every other input.
    /// Safe from any thread. It reaches the delegate only if the app is
    /// active when it takes effect; otherwise it is discarded, counted in
    /// ``discardedInputCount`` and reported as ``EngineEvent/inputDiscarded(_:)``.
    /// On the loop thread with the engine idle, it takes effect before this returns.
    /// - Throws: ``/MainLoop/MainLoopError/shutDown`` after the loop was shut down.
    public func deliverInput(_ input: String) throws(MainLoopError) {
        try enqueue(.input(input))
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
