extension MainRunLoop {
    /// Whether the caller is on this loop's thread.
    @inlinable
    public var inLoop: Bool { core.isLoopThread }

    /// Fails with a clear message unless called on the loop thread. Every
    /// loop-only method calls this; use it in your own loop-bound code.
    /// Inlinable: it is one thread-id compare on every hot path.
    @inlinable
    public func preconditionInLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(core.isLoopThread, "must be called on the main loop's thread", file: file, line: line)
    }

    /// Like ``preconditionInLoop(file:line:)`` but checked in debug builds
    /// only, for hot paths.
    @inlinable
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(core.isLoopThread, "must be called on the main loop's thread", file: file, line: line)
    }
}
