extension MainRunLoop {
    /// Whether the caller is on this loop's thread.
    @inlinable
    public var inLoop: Bool { core.isLoopThread }

    /// Fails with a clear message unless called on the loop thread. Every
    /// loop-only method calls this; use it in your own loop-bound code.
    /// Inlinable: it is one thread-id compare on every hot path.
    @inlinable
    public func preconditionInLoop(function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        if !core.isLoopThread { offLoopThread(function: function, file: file, line: line) }
    }

    /// The failure of ``preconditionInLoop(function:file:line:)``: names the
    /// method and the rule. Outlined, so the inlined check stays one compare.
    @usableFromInline
    func offLoopThread(function: StaticString, file: StaticString, line: UInt) -> Never {
        core.offLoopThread(function: function, file: file, line: line)
    }
}
